"""Start toolwire's tool server as a real process: over stdio (for `mcp.Client`) or under uvicorn on 127.0.0.1.

Reusable by any test: `stdio_params(target)`, `HttpServer(target, ...)` (a context manager that waits for
/healthz), `http_client(url, token=...)`."""

import json
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from .polling import WaitFailed, await_until, wait_until

REPO = Path(__file__).resolve().parents[2]
SUPPORT_TOOLS = "examples.support_tools:registry"
CONFORMANCE_TOOLS = "examples.conformance_tasks:registry"
"""The conformance fixtures of both suites (0.1.16 and 0.2.0-alpha.12) in one server."""
TEST_TOOLS = "tests/server/toolset.py:registry"


def serve_argv(target: str, *args: str) -> list[str]:
    """The `toolwire serve` command line, run with this interpreter so it sees the same venv."""
    return [sys.executable, "-m", "toolwire_server", target, *args]


def stdio_params(target: str, *args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    argv = serve_argv(target, "--stdio", *args)
    return StdioServerParameters(command=argv[0], args=argv[1:], env=env or {}, cwd=str(REPO))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until_ok(url: str, proc: "subprocess.Popen[Any]", log: Path, deadline_s: float, what: str) -> None:
    """Poll GET `url` until it answers 200 while `proc` lives; on failure say why, with the end of its log."""

    def answers() -> bool:
        try:
            return httpx2.get(url, timeout=2).status_code == 200
        except httpx2.TransportError:
            return False

    wait_until(answers, f"{what} to answer 200 at {url}", timeout_s=deadline_s, interval_s=0.05, proc=proc, log=log)


def stop_process(proc: "subprocess.Popen[Any]", timeout_s: float = 10) -> None:
    """SIGTERM, then SIGKILL if it has not ended after `timeout_s`."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


async def check_client_cancel_stops_the_tool(client: Client, tmp_path: Path) -> None:
    """Cancel a running slow_sleep call: the tool records its cancellation and the connection stays usable."""
    marker = tmp_path / "cancel"
    async with anyio.create_task_group() as tg:
        tg.start_soon(client.call_tool, "slow_sleep", {"seconds": 60, "marker": str(marker)})
        await wait_for_file(tmp_path / "cancel.started")
        tg.cancel_scope.cancel()
    await wait_for_file(tmp_path / "cancel.cancelled")
    assert text_of(await client.call_tool("echo", {"text": "usable"})) == "usable"
    assert not (tmp_path / "cancel.finished").exists()


class HttpServer:
    """`toolwire serve TARGET --http` on a free 127.0.0.1 port; ready once GET /healthz answers (about 1 s; the bound
    is 60 s: beside the suite's heaviest tests in the other test process a start took over 20 s)."""

    def __init__(self, target: str, *args: str, env: dict[str, str] | None = None, ready_timeout_s: float = 60) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.base = f"http://127.0.0.1:{self.port}"
        self.argv = serve_argv(target, "--http", "--port", str(self.port), *args)
        self.env = {**os.environ, **(env or {})}
        self.ready_timeout_s = ready_timeout_s
        self.stderr_path = Path(tempfile.mkstemp(prefix="toolwire-http-", suffix=".log")[1])
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> "HttpServer":
        stderr = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(self.argv, cwd=REPO, env=self.env, stdout=subprocess.DEVNULL, stderr=stderr)
        stderr.close()
        try:
            wait_until_ok(self.base + "/healthz", self.proc, self.stderr_path, self.ready_timeout_s, "tool server")
        except WaitFailed:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.proc is not None:
            stop_process(self.proc)

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")


@asynccontextmanager
async def http_client(
    url: str, *, token: str | None = None, mode: Literal["auto", "legacy"] = "auto", timeout_s: float = 30
) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout_s) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode, read_timeout_seconds=timeout_s) as client,
    ):
        yield client


async def wait_for_file(path: Path, timeout_s: float = 15) -> None:
    """Wait for a file a tool writes in the server process; WaitFailed if it does not appear in time."""
    await await_until(anyio.Path(path).exists, f"{path} to be written", timeout_s=timeout_s)


def text_of(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def tokens_file(folder: Path, agents: dict[str, tuple[str, list[str]]]) -> Path:
    """A server's access file in `folder`: agent name -> (its token, the tools and URIs granted to it)."""
    path = folder / "tokens.toml"
    tables = [
        f"[agents.{name}]\ntoken = {json.dumps(token)}\ntools = {json.dumps(tools)}\n"
        for name, (token, tools) in agents.items()
    ]
    path.write_text("".join(tables))
    return path
