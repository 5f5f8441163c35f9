"""Two MCP servers nobody here wrote, server-everything (npm) and mcp-server-time (PyPI), both pinned, mounted behind
one `toolwire serve --http --config`: the MCP Inspector CLI (the official TypeScript SDK's client) lists and calls
their tools through it with an agent's bearer token, and a narrower grant hides server-everything from another agent;
toolwire's own agent (a scripted model) calls them through the same gateway; server-everything killed -9 is
restarted and answers again."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from external.servers import HERE, NODE_DIR, needs, npm_server, py_server
from helpers.cli import clean_env, run_toolwire
from helpers.polling import await_until
from helpers.server_config import POLICY_TOOLS, server_toml
from helpers.servers import REPO, HttpServer, http_client, text_of

EVERYTHING = npm_server("server-everything")
TIME = py_server("mcp-server-time")
INSPECTOR = NODE_DIR / "node_modules" / ".bin" / "mcp-inspector"
NEEDS_ALL = needs([*EVERYTHING, *TIME, str(INSPECTOR)])


def _config(folder: Path) -> Path:
    """Agent ops may use both upstreams; agent clock only mcp-server-time's tools."""
    path = folder / "server.toml"
    agents = {"ops": ("tok-ops", ["everything__*", "time__*"]), "clock": ("tok-clock", ["time__*"])}
    upstreams = {"everything": [*EVERYTHING, "stdio"], "time": [TIME[0], "--local-timezone", "UTC"]}
    path.write_text(server_toml(tools=POLICY_TOOLS, agents=agents, upstreams=upstreams))
    return path


def _inspector(url: str, token: str, home: Path, *args: str) -> dict[str, Any]:
    """`mcp-inspector --cli URL ARGS` with the agent's bearer token: its JSON result (exit status 0 asserted)."""
    env = {**os.environ, "PATH": f"{INSPECTOR.parent}{os.pathsep}{os.environ['PATH']}", "HOME": str(home)}
    argv = [str(INSPECTOR), "--cli", url, "--transport", "http", "--header", f"Authorization: Bearer {token}"]
    done = subprocess.run(
        [*argv, *args, "--format", "json", "-q"], env=env, capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    answer: dict[str, Any] = json.loads(done.stdout)["result"]
    return answer


def _children(pid: int) -> dict[int, str]:
    """The processes whose parent is `pid`: their command lines."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if int(stat[stat.rindex(")") + 2 :].split()[1]) == pid:
            found[int(entry.name)] = cmdline
    return found


def _everything_pid(server: HttpServer) -> int:
    assert server.proc is not None
    pids = [pid for pid, cmd in _children(server.proc.pid).items() if "server-everything" in cmd]
    assert len(pids) == 1, pids
    return pids[0]


@pytest.mark.node
@NEEDS_ALL
async def test_typescript_client_and_toolwire_agent_through_the_gateway(tmp_path: Path) -> None:
    with HttpServer(f"--config={_config(tmp_path)}") as server:
        listed = _inspector(server.url, "tok-ops", tmp_path, "--method", "tools/list")
        names = {tool["name"] for tool in listed["tools"]}
        assert {"everything__echo", "everything__get-sum", "time__get_current_time", "time__convert_time"} <= names
        assert "echo" not in names  # the tools module's own echo is outside ops's grant

        echoed = _inspector(
            server.url, "tok-ops", tmp_path, "--method", "tools/call", "--tool-name", "everything__echo",
            "--tool-arg", "message=through the gateway",
        )  # fmt: skip
        assert echoed["content"] == [{"type": "text", "text": "Echo: through the gateway"}]
        now = _inspector(
            server.url, "tok-ops", tmp_path, "--method", "tools/call", "--tool-name", "time__get_current_time",
            "--tool-arg", "timezone=UTC",
        )  # fmt: skip
        assert not now.get("isError") and '"timezone": "UTC"' in now["content"][0]["text"]

        narrow = _inspector(server.url, "tok-clock", tmp_path, "--method", "tools/list")
        assert {tool["name"] for tool in narrow["tools"]} == {"time__get_current_time", "time__convert_time"}

        # toolwire's own agent, a scripted model, over the same endpoint with agent clock's token.
        task = json.dumps([["time__get_current_time", {"timezone": "UTC"}], ["everything__echo", {"message": "x"}]])
        done = run_toolwire(
            *("run", task, "--model", "scripted:calls", "--server-url", server.url, "--token-env", "GATEWAY_TOKEN"),
            "--json",
            env=clean_env(GATEWAY_TOKEN="tok-clock", TOOLWIRE_DB=str(tmp_path / "runs.db")),
            command=(sys.executable, str(HERE / "driver.py")),
            timeout_s=60,
        )
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        calls = [c for step in json.loads(done.stdout)["steps"] for c in step.get("results", [])]
        assert [(c["name"], c.get("error_kind")) for c in calls] == [
            ("time__get_current_time", None),
            ("everything__echo", "unknown_tool"),  # hidden by clock's grant: never listed, never sent
        ]

        first = _everything_pid(server)
        os.kill(first, signal.SIGKILL)
        async with http_client(server.url, token="tok-ops") as ops:

            async def echoes() -> bool:
                answer = await ops.call_tool("everything__echo", {"message": "back"})
                return not answer.is_error and text_of(answer) == "Echo: back"

            await await_until(echoes, "server-everything to be restarted", timeout_s=20, interval_s=0.2)
        assert _everything_pid(server) != first
        again = _inspector(
            server.url, "tok-ops", tmp_path, "--method", "tools/call", "--tool-name", "everything__echo",
            "--tool-arg", "message=again",
        )  # fmt: skip
        assert again["content"] == [{"type": "text", "text": "Echo: again"}]
