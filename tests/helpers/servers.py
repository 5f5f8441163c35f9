"""Start toolwire's tool server as a real process: over stdio (for `mcp.Client`) or under uvicorn on 127.0.0.1.

Reusable by any test: `stdio_params(target)`, `HttpServer(target, ...)` (a context manager that waits for
/healthz), `http_client(url, token=...)`."""

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

REPO = Path(__file__).resolve().parents[2]
SUPPORT_TOOLS = "examples.support_tools:registry"
CONFORMANCE_TOOLS = "examples.conformance_tools:registry"
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


class HttpServer:
    """`toolwire serve TARGET --http` on a free 127.0.0.1 port; ready once GET /healthz answers."""

    def __init__(self, target: str, *args: str, env: dict[str, str] | None = None, ready_timeout_s: float = 20) -> None:
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
        deadline = time.monotonic() + self.ready_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}: {self.stderr()}")
            try:
                if httpx2.get(self.base + "/healthz", timeout=1).status_code == 200:
                    return self
            except httpx2.TransportError:
                pass
            time.sleep(0.05)  # polling a real condition with a bounded deadline
        self.__exit__(None, None, None)
        raise RuntimeError(f"server not healthy after {self.ready_timeout_s}s: {self.stderr()}")

    def __exit__(self, *exc: Any) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

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


async def wait_for_file(path: Path, timeout_s: float = 15) -> bool:
    """Poll for a file a tool writes (a real condition, bounded deadline)."""
    target = anyio.Path(path)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if await target.exists():
            return True
        await anyio.sleep(0.02)
    return await target.exists()


def text_of(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)
