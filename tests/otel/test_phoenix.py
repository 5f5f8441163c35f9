"""A real backend: Arize Phoenix started offline on 127.0.0.1, a run (agent + stdio tool server) exported to it
over OTLP/HTTP, and the spans read back through its REST API as AGENT, LLM and TOOL with the token counts."""

import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

from helpers.polling import wait_until
from helpers.servers import REPO, SUPPORT_TOOLS, free_port, stop_process, wait_until_ok

pytestmark = [
    pytest.mark.phoenix,
    pytest.mark.timeout(300),
    pytest.mark.skipif(
        importlib.util.find_spec("phoenix") is None,
        reason="Arize Phoenix is not installed: pip install -e '.[phoenix]' (or arize-phoenix)",
    ),
]

HERE = Path(__file__).resolve().parent
PROJECT = "toolwire-test"
READY_TIMEOUT_S = 180.0
"""Phoenix runs its migrations on first start; 30+ s on a loaded 2-core machine is normal."""


@dataclass
class Phoenix:
    base: str
    proc: subprocess.Popen[bytes]
    log: Path


def phoenix_env(workdir: Path, port: int, grpc_port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_"))}
    env.update(
        PHOENIX_WORKING_DIR=str(workdir),
        PHOENIX_HOST="127.0.0.1",
        PHOENIX_PORT=str(port),
        PHOENIX_GRPC_PORT=str(grpc_port),
        PHOENIX_TELEMETRY_ENABLED="false",
        PHOENIX_ALLOW_EXTERNAL_RESOURCES="false",
    )
    return env


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    workdir = tmp_path_factory.mktemp("phoenix")
    port, grpc_port = free_port(), free_port()
    log = workdir / "phoenix.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "phoenix"), "serve"],
            cwd=workdir,
            env=phoenix_env(workdir, port, grpc_port),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    running = Phoenix(f"http://127.0.0.1:{port}", proc, log)
    try:
        wait_until_ok(running.base + "/healthz", proc, log, READY_TIMEOUT_S, "phoenix")
        yield running
    finally:
        stop_process(proc, timeout_s=30)


def run_agent(px: Phoenix, tmp_path: Path) -> dict[str, Any]:
    import json

    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(
        OTEL_EXPORTER_OTLP_ENDPOINT=px.base,
        OTEL_SERVICE_NAME="toolwire",
        OTEL_RESOURCE_ATTRIBUTES=f"openinference.project.name={PROJECT}",
        TOOLWIRE_SUPPORT_DB=str(tmp_path / "support.sqlite3"),
    )
    argv = [
        sys.executable,
        str(HERE / "agent_driver.py"),
        "stdio",
        sys.executable,
        str(HERE / "serve_traced.py"),
        SUPPORT_TOOLS,
        "--stdio",
    ]
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["status"] == "done", summary
    return summary


def read_spans(px: Phoenix, trace_id: str, expect: int, timeout_s: float = 60) -> list[dict[str, Any]]:
    """Poll the REST API until the run's spans are all ingested (Phoenix ingests in its own process)."""
    url = f"{px.base}/v1/projects/{PROJECT}/spans"
    spans: list[dict[str, Any]] = []

    def ingested() -> list[dict[str, Any]] | None:
        response = httpx2.get(url, params={"trace_id": trace_id, "limit": 100}, timeout=10)
        if response.status_code == 200:
            spans[:] = response.json()["data"]
        return spans if len(spans) >= expect else None

    return wait_until(
        ingested,
        f"phoenix to hold {expect} spans of trace {trace_id}",
        timeout_s=timeout_s,
        interval_s=0.25,
        proc=px.proc,
        log=px.log,
        detail=lambda: f"it holds {len(spans)}: {sorted(s['name'] for s in spans)}",
    )


def test_phoenix_shows_agent_llm_and_tool_spans_with_tokens(phoenix: Phoenix, tmp_path: Path) -> None:
    summary = run_agent(phoenix, tmp_path)
    # invoke_agent, 2 chat, 2 execute_tool, 2 MCP client spans, 2 server tools/call, + the tools/list round trips
    spans = read_spans(phoenix, summary["trace_id"], expect=9)
    # Phoenix synthesizes openinference.span.kind from gen_ai.operation.name and returns it as span_kind.
    kinds = {s["name"]: s["span_kind"] for s in spans}
    assert kinds["invoke_agent support-agent"] == "AGENT"
    assert kinds["chat gpt-4o-mini"] == "LLM"
    assert kinds["execute_tool get_order"] == "TOOL" and kinds["execute_tool calculator"] == "TOOL"
    assert kinds["tools/call get_order"] == "TOOL"  # the server process's span, same trace
    assert kinds["MCP send tools/call get_order"] == "UNKNOWN"  # the SDK's client span carries no gen_ai keys
    llm = sorted((s for s in spans if s["name"] == "chat gpt-4o-mini"), key=lambda s: s["start_time"])
    counted = [[s["attributes"]["llm.token_count.prompt"], s["attributes"]["llm.token_count.completion"]] for s in llm]
    assert counted == summary["usage"]
    assert all(s["attributes"]["llm.token_count.total"] == sum(c) for s, c in zip(llm, counted, strict=True))
    assert all(s["attributes"]["session.id"] == summary["run_id"] for s in llm)
    agent = next(s for s in spans if s["name"] == "invoke_agent support-agent")
    assert agent["parent_id"] is None
    tool = next(s for s in spans if s["name"] == "execute_tool get_order")
    assert tool["parent_id"] == agent["context"]["span_id"]
    assert tool["attributes"]["tool.name"] == "get_order"
