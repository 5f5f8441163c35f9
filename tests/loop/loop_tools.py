"""Tools for the loop tests, served by the real server
(`python -m toolwire_server tests/loop/loop_tools.py:registry`)."""

import os
from pathlib import Path

import anyio

from toolwire_server import Registry

registry = Registry("loop-tests", default_timeout_s=60)


@registry.tool(description="Sleep for `seconds`, then say so. Use it to test concurrency.", idempotent=True)
async def sleepy(seconds: float, tag: str = "") -> str:
    await anyio.sleep(seconds)
    return f"slept {seconds} {tag}".strip()


@registry.tool(description="Never returns. Writes `marker` when it is cancelled, so a test can see the cancel.")
async def hang(marker: str) -> str:
    try:
        await anyio.sleep_forever()
    finally:
        Path(marker).write_text("cancelled")  # noqa: ASYNC240 - sync on purpose: an await here is cancelled too
    return "unreachable"


@registry.tool(description="The server's process id, then wait until `started` exists (for kill tests).")
async def pid() -> int:
    return os.getpid()


@registry.tool(description="Write `started`, then wait forever (a call in flight while the server is killed).")
async def in_flight(started: str) -> str:
    await anyio.Path(started).write_text(str(os.getpid()))
    await anyio.sleep_forever()
    return "unreachable"


@registry.tool(description="Echo the text back.", idempotent=True)
async def echo(text: str) -> str:
    return text
