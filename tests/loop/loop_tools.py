"""Tools for the loop tests, served by the real server
(`python -m toolwire_server tests/loop/loop_tools.py:registry`)."""

import os
from pathlib import Path

import anyio

from toolwire_server import Registry

registry = Registry("loop-tests", default_timeout_s=60)
_in_flight: dict[str, int] = {}
_all_here: dict[str, anyio.Event] = {}


@registry.tool(description="Sleep for `seconds`, then say so. Use it to test concurrency.", idempotent=True)
async def sleepy(seconds: float, tag: str = "") -> str:
    await anyio.sleep(seconds)
    return f"slept {seconds} {tag}".strip()


@registry.tool(
    description="Return once `count` calls of this `group` are in flight at the same time, or after `within_s` say "
    "how many were. Use it to test concurrency without timing it.",
    idempotent=True,
)
async def rendezvous(group: str, count: int, tag: str = "", within_s: float = 20) -> str:
    here = _all_here.setdefault(group, anyio.Event())
    _in_flight[group] = _in_flight.get(group, 0) + 1
    try:
        if _in_flight[group] >= count:
            here.set()
        with anyio.move_on_after(within_s):  # a bound, not a sync: all `count` calls meet long before it
            await here.wait()
        if not here.is_set():
            return f"only {_in_flight[group]} of {count} calls were in flight together after {within_s:g} s"
        return f"met {count} {tag}".strip()
    finally:
        _in_flight[group] -= 1


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
