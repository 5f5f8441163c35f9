"""What the fault tests share: the fault toolset, a stdio server whose log is kept, and a raw stdio pipe that writes
bytes a well-behaved client never would and reads back one JSON-RPC line at a time."""

import asyncio
import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import stdio_client

from helpers.servers import REPO, serve_argv, stdio_params

FAULT_TOOLS = "tests/faults/fault_tools.py:registry"
ANSWER_TIMEOUT_S = 30
"""The bound on waiting for one answer line: a hung server fails the test instead of hanging it."""

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "faults", "version": "0"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def read_log(log: Path, tail: int | None = None) -> str:
    """A server's log file (its last `tail` characters)."""
    text = log.read_text(errors="replace")
    return text if tail is None else text[-tail:]


def request(request_id: int | str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def echo_call(request_id: int | str, text: str) -> dict[str, Any]:
    return request(request_id, "tools/call", {"name": "echo", "arguments": {"text": text}})


@asynccontextmanager
async def logged_stdio_client(log: Path, *args: str, target: str = FAULT_TOOLS) -> AsyncIterator[Client]:
    """`mcp.Client` on `toolwire serve TARGET --stdio ARGS`, the server's stderr (its log) written to `log`."""
    with log.open("w") as errlog:
        async with Client(stdio_client(stdio_params(target, *args), errlog=errlog)) as client:
            yield client


class RawStdio:
    """The server over stdio with nothing in between: `send` writes bytes, `answer` reads one JSON line."""

    def __init__(self, proc: asyncio.subprocess.Process, log: Path) -> None:
        self.proc, self.log = proc, log
        assert proc.stdin is not None and proc.stdout is not None
        self.stdin, self.stdout = proc.stdin, proc.stdout

    async def send(self, data: bytes | dict[str, Any]) -> None:
        self.stdin.write(data if isinstance(data, bytes) else json.dumps(data).encode() + b"\n")
        await self.stdin.drain()

    async def answer(self) -> dict[str, Any]:
        """The next line the server writes, parsed; fails if the server ends or says nothing in time."""
        with anyio.fail_after(ANSWER_TIMEOUT_S):
            line = await self.stdout.readline()
        assert line, f"the server closed stdout (exit {self.proc.returncode}); log:\n{read_log(self.log, 3000)}"
        answer: dict[str, Any] = json.loads(line)
        return answer

    async def initialize(self) -> None:
        await self.send(INITIALIZE)
        assert "result" in await self.answer()
        await self.send(INITIALIZED)


@asynccontextmanager
async def raw_stdio(log: Path, *args: str, target: str = FAULT_TOOLS) -> AsyncIterator[RawStdio]:
    """`toolwire serve TARGET --stdio ARGS` as a subprocess with pipes; closed (stdin EOF, then waited) at the end."""
    argv = serve_argv(target, "--stdio", *args)
    with log.open("wb") as errlog:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            limit=1 << 26,
        )
    pipe = RawStdio(proc, log)
    try:
        yield pipe
    finally:
        pipe.stdin.close()
        try:
            with anyio.fail_after(20):
                await proc.wait()
        except TimeoutError:
            proc.kill()
            await proc.wait()
