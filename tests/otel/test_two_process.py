"""One trace across two processes: the agent (its own process) and the real tool server, over stdio and over HTTP,
both exporting OTLP/HTTP to a receiver the test starts. The server's `tools/call X` span must hang, through the
SDK's client span, under the agent's `execute_tool X` span."""

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.otlp_sink import OtlpSink, Spans
from helpers.servers import REPO, SUPPORT_TOOLS, HttpServer

HERE = Path(__file__).resolve().parent
AGENT = HERE / "agent_driver.py"
SERVE = HERE / "serve_traced.py"
TOOLS = ("get_order", "calculator")


@pytest.fixture
def sink() -> Iterator[OtlpSink]:
    with OtlpSink() as running:
        yield running


def otel_env(sink: OtlpSink, service: str, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(
        OTEL_EXPORTER_OTLP_ENDPOINT=sink.endpoint,
        OTEL_SERVICE_NAME=service,
        OTEL_BSP_SCHEDULE_DELAY="200",
        TOOLWIRE_SUPPORT_DB=str(tmp_path / "support.sqlite3"),
    )
    return env


def run_agent(argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(AGENT), *argv], cwd=REPO, env=env, capture_output=True, text=True, timeout=90
    )
    assert done.returncode == 0, done.stderr[-3000:]
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["status"] == "done", summary
    assert summary["answer"] == "Order A123 costs 5900.0 rupees with 18% GST."
    return summary


def server_spans_arrived(trace_id: str) -> Any:
    def check(spans: Spans) -> bool:
        names = {s["name"] for s in spans if s["trace_id"] == trace_id}
        return {f"tools/call {t}" for t in TOOLS} <= names and "invoke_agent support-agent" in names

    return check


def check_one_trace(spans: Spans, trace_id: str, transport: str) -> None:
    run = [s for s in spans if s["trace_id"] == trace_id]
    by_id = {s["span_id"]: s for s in run}
    services = {s["resource"].get("service.name") for s in run}
    assert services == {"agent-proc", "toolwire-server"}, services
    root = next(s for s in run if s["name"] == "invoke_agent support-agent")
    assert root["parent_span_id"] is None
    for tool in TOOLS:
        server = next(s for s in run if s["name"] == f"tools/call {tool}")
        assert server["kind"] == "SERVER" and server["resource"]["service.name"] == "toolwire-server"
        assert server["attributes"]["gen_ai.tool.name"] == tool
        client = by_id[server["parent_span_id"]]
        assert client["kind"] == "CLIENT" and client["resource"]["service.name"] == "agent-proc"
        assert client["attributes"]["mcp.method.name"] == "tools/call"
        execute = by_id[client["parent_span_id"]]
        assert execute["name"] == f"execute_tool {tool}"
        call_ids = {"get_order": "call_order", "calculator": "call_calc"}
        assert execute["attributes"]["gen_ai.tool.call.id"] == call_ids[tool]
        assert execute["attributes"]["network.transport"] == transport
        assert execute["attributes"]["mcp.method.name"] == "tools/call"
        assert execute["parent_span_id"] == root["span_id"]
    # Each server span sits under its own execute_tool span, not the sibling's.
    parents = {
        by_id[by_id[s["parent_span_id"]]["parent_span_id"]]["span_id"]
        for s in run
        if s["name"].startswith("tools/call ")
    }
    assert len(parents) == 2


def test_one_trace_over_stdio(sink: OtlpSink, tmp_path: Path) -> None:
    # The stdio server gets only what the source passes it: the driver passes child_process_env() (OTEL_* but the
    # agent's service name), so the server names itself toolwire-server.
    summary = run_agent(
        ["stdio", sys.executable, str(SERVE), SUPPORT_TOOLS, "--stdio"], otel_env(sink, "agent-proc", tmp_path)
    )
    spans = sink.wait_for(server_spans_arrived(summary["trace_id"]), 30)
    check_one_trace(spans, summary["trace_id"], "pipe")


def test_one_trace_over_http(sink: OtlpSink, tmp_path: Path) -> None:
    server = HttpServer(SUPPORT_TOOLS, env=otel_env(sink, "toolwire-server", tmp_path))
    server.argv = [sys.executable, str(SERVE), SUPPORT_TOOLS, "--http", "--port", str(server.port)]
    with server:
        summary = run_agent(["http", server.url], otel_env(sink, "agent-proc", tmp_path))
        spans = sink.wait_for(server_spans_arrived(summary["trace_id"]), 30)
    check_one_trace(spans, summary["trace_id"], "tcp")
