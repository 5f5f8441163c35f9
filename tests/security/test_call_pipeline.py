"""Issue 33's hole: every tools/call passes the one call pipeline, whatever way it came in. A table: each way in
(the SDK path and the fast path over stdio and HTTP, the in-process RegistrySource, a task over stdio and HTTP, an
upstream's tool) against each stage (a limit, the audit record, a bad argument, a timeout, a result cut), on real
`toolwire serve --config` processes reached by toolwire's own McpSource (which declares the tasks extension, as
`toolwire run` does). Before the pipeline, a task-supporting tool called as a task passed no limit and left no audit
record: its rows failed, the others passed."""

import sqlite3
import sys
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import clean_env
from helpers.polling import wait_until
from helpers.server_config import server_toml
from helpers.servers import REPO, HttpServer, serve_argv
from helpers.tasks_rpc import result, rpc
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.registry_source import RegistrySource
from toolwire_client.tools.source import RunContext, ToolRequest, ToolSource
from toolwire_server.auth.access import Grant
from toolwire_server.limits import ServerLimits
from toolwire_server.policy.audit import read_records
from toolwire_server.transports.processes import ServeSpec
from toolwire_shared.messages import ToolCall
from toolwire_shared.results import ToolResult

TOOLS = f"{REPO}/tests/security/pipeline_tools.py:registry"
AGENT = Grant(agent="a", patterns=("*",))
"""In process: the caller the config's agent `a` is over the wire."""
CAP = 200
"""The servers' --max-result-chars: `big` with n=1000 is cut to it."""


def _config(folder: Path, prefix: str, upstream: bool = False) -> Path:
    """One agent that may call everything; one call a minute (burst 1) of `<prefix>report`; every call audited."""
    tables: dict[str, dict[str, object]] = {"audit": {"sqlite": "audit.db", "flush_s": 60, "batch": 100000}}
    if upstream:  # the same tools, served by another toolwire, mounted as up__<tool> (its timeout the front's own)
        args = [*serve_argv(TOOLS)[1:], "--stdio"]
        tables["upstreams.up"] = {"command": sys.executable, "args": args, "timeout_s": 0.5}
    body = server_toml(
        tools=TOOLS,
        agents={"a": ("tok-a", ["*"])},
        limits=[{"agent": "a", "tool": f"{prefix}report", "per_minute": 1, "burst": 1}],
        tables=tables,
    )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "server.toml"
    path.write_text(body)
    return path


@dataclass(frozen=True)
class Way:
    """One way into the pipeline: how the server is reached, and the prefix of the tools it calls."""

    transport: str  # stdio | http | inproc
    prefix: str = ""
    fast_path: bool = True
    upstream: bool = False


WAYS = {
    "stdio, SDK path": Way("stdio", fast_path=False),
    "stdio, fast path": Way("stdio"),
    "HTTP, SDK path": Way("http", fast_path=False),
    "HTTP, fast path": Way("http"),
    "in-process RegistrySource": Way("inproc"),
    "task over stdio": Way("stdio", prefix="task_"),
    "task over HTTP": Way("http", prefix="task_"),
    "upstream's tool over HTTP": Way("http", prefix="up__", upstream=True),
}


@asynccontextmanager
async def _source(way: Way, config: Path, folder: Path) -> AsyncIterator[ToolSource]:
    """A source reaching a real server for `config`; on leaving, that server has stopped (its audit written)."""
    env = clean_env(TOOLWIRE_TASK_STORE=str(folder / "tasks.sqlite"))
    if not way.fast_path:
        env["TOOLWIRE_NO_FAST_PATH"] = "1"
    limits = ("--max-result-chars", str(CAP))
    if way.transport == "inproc":
        registry, _ = ServeSpec("", config_file=str(config)).load()
        assert registry.policy is not None
        async with registry.policy.serving():  # on its way out the audit queue is written
            yield RegistrySource(registry, grant=AGENT, limits=ServerLimits(max_result_chars=CAP))
        return
    async with AsyncExitStack() as stack:
        if way.transport == "stdio":
            argv = serve_argv(f"--config={config}", "--stdio", "--agent", "a", *limits)
            source = McpSource("pipeline", command=argv, env=env, cwd=str(REPO))
        else:
            server = stack.enter_context(HttpServer(f"--config={config}", *limits, env=env))
            source = McpSource("pipeline", url=server.url, token="tok-a")
        await source.start()
        try:
            yield source
        finally:
            await source.aclose()  # stdio: the end of stdin stops the server; HTTP: SIGTERM as the stack unwinds


async def _call(source: ToolSource, name: str, arguments: dict[str, Any]) -> ToolResult:
    call = ToolCall(id=f"c-{name}", name=name, arguments=arguments)
    return await source.call(ToolRequest(call, RunContext("pipeline"), timeout_s=60))


def _records(path: Path) -> list[dict[str, Any]]:
    """The audit trail; none at all if the server never wrote a record (it makes the file with the first)."""
    return read_records(str(path)) if path.exists() else []


def _kind(answer: ToolResult) -> str:
    return answer.error_kind or "ok"


@pytest.mark.parametrize("way", list(WAYS.values()), ids=list(WAYS))
async def test_every_way_in_passes_every_stage(way: Way, tmp_path: Path) -> None:
    config = _config(tmp_path, way.prefix, way.upstream)

    def tool(name: str) -> str:
        return way.prefix + name

    async with _source(way, config, tmp_path) as source:
        reports = [_kind(await _call(source, tool("report"), {"text": "hi"})) for _ in range(3)]
        bad = await _call(source, tool("big"), {"n": "lots"})
        late = await _call(source, tool("slow"), {"seconds": 30})
        cut = await _call(source, tool("big"), {"n": 1000})
    records = _records(tmp_path / "audit.db")
    observed = {
        "limit": reports,
        "audit": Counter((r["tool"], r["outcome"]) for r in records),
        "bad argument": _kind(bad),
        "timeout": _kind(late),
        "cut": (_kind(cut), cut.content.count("x"), f"result cut to {CAP} of 1000 characters" in cut.content),
    }
    assert observed == {
        "limit": ["ok", "limited", "limited"],
        "audit": Counter(
            {
                (tool("report"), "ok"): 1,
                (tool("report"), "limited"): 2,
                (tool("big"), "bad_arguments"): 1,
                (tool("slow"), "timeout"): 1,
                (tool("big"), "ok"): 1,
            }
        ),
        "bad argument": "bad_arguments",
        "timeout": "timeout",
        "cut": ("ok", CAP, True),
    }


def test_a_task_holds_its_in_flight_slot_until_it_ends_and_is_audited_then(tmp_path: Path) -> None:
    """`in_flight = 1`: while a task runs, a second is refused (`limited`, no task made); the first task's audit
    record is written when it ends, with its latency (not the moment its handle went out)."""
    config = _config(tmp_path, "task_")
    config.write_text(config.read_text() + '\n[[limits]]\nagent = "a"\ntool = "task_hold"\nin_flight = 1\n')
    env = clean_env(TOOLWIRE_TASK_STORE=str(tmp_path / "tasks.sqlite"))
    with HttpServer(f"--config={config}", env=env) as server:
        first = result(server.url, "tools/call", {"name": "task_hold", "arguments": {"seconds": 3}}, token="tok-a")
        assert first["resultType"] == "task" and first["status"] == "working", first
        second = rpc(server.url, "tools/call", {"name": "task_hold", "arguments": {"seconds": 0}}, token="tok-a")
        refused = second["result"]
        assert refused["isError"] and "in flight at once" in refused["content"][0]["text"], refused
        task_id = first["taskId"]

        def ended() -> dict[str, Any] | None:
            got = result(server.url, "tasks/get", {"taskId": task_id}, token="tok-a")
            return None if got["status"] == "working" else got

        done = wait_until(ended, "the first task to end")
        assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "held", done
        after = rpc(server.url, "tools/call", {"name": "task_hold", "arguments": {"seconds": 0}}, token="tok-a")
        assert not after["result"].get("isError"), after  # the slot was given back when the task ended
    records = [r for r in _records(tmp_path / "audit.db") if r["tool"] == "task_hold"]
    assert sorted(r["outcome"] for r in records) == ["limited", "ok", "ok"]
    assert max(r["latency_ms"] for r in records) >= 3000  # the task's whole life
    with sqlite3.connect(tmp_path / "tasks.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM toolwire_tasks WHERE tool = 'task_hold'").fetchone()[0] == 2
