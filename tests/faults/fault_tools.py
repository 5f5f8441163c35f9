"""Tools for the fault tests (not an example): CPU-bound, hung, hostile-echoing and worker-reporting tools that record
what happened to them in files (`marker` + ".started" holds the pid of the process the tool runs in)."""

import os
import time
from pathlib import Path

from toolwire_server import Registry, ToolContext

registry = Registry("toolwire-fault-tools")


def _started(marker: str) -> None:
    Path(marker + ".started").write_text(str(os.getpid()))


@registry.tool(description="Echo the text back.")
async def echo(text: str) -> str:
    return text


@registry.tool(description="Add two integers.")
async def add(a: int, b: int) -> int:
    return a + b


@registry.tool(description="Look a record up by key; fails with a message that quotes the key.")
def lookup(key: str) -> str:
    raise ValueError(f"no record with key {key}")


def _spin(seconds: float, marker: str) -> str:
    _started(marker)
    end = time.monotonic() + seconds
    while time.monotonic() < end:  # CPU-bound: never yields to an event loop
        pass
    Path(marker + ".finished").write_text("done")
    return "spun"


@registry.tool(
    description="Busy-loop on the event loop for `seconds` (an async tool that never awaits).", timeout_s=0.5
)
async def spin(seconds: float, marker: str) -> str:
    return _spin(seconds, marker)


@registry.tool(
    description="Busy-loop for `seconds` in a worker process (an async tool that never awaits).",
    timeout_s=60,
    isolation="process",
)
async def spin_isolated(seconds: float, marker: str) -> str:
    return _spin(seconds, marker)


@registry.tool(description="A sync tool that never returns, in a worker process.", timeout_s=1.5, isolation="process")
def hang(marker: str) -> str:
    _started(marker)
    while True:
        time.sleep(3600)


@registry.tool(
    description="Big-integer arithmetic that runs for minutes, in a worker process.", timeout_s=1.5, isolation="process"
)
async def huge_power(marker: str, base: int = 9) -> int:
    _started(marker)
    return base**base**base % 7  # 9 ** 387420489: minutes of C code that never returns to the interpreter loop


@registry.tool(description="The pid of the process this tool runs in.", isolation="process")
def worker_pid() -> int:
    return os.getpid()


@registry.tool(
    description="Report progress twice from a worker process and return what its context carried.", isolation="process"
)
async def context_in_worker(ctx: ToolContext, idempotency_key: str | None = None) -> dict[str, object]:
    await ctx.report_progress(1, 2, "half")
    await ctx.log("info", "from the worker")
    await ctx.report_progress(2, 2, "done")
    return {"tool": ctx.tool, "agent": ctx.agent, "key": idempotency_key, "session": ctx.session is None}


@registry.tool(description="Fail in a worker process with a message quoting `text`.", isolation="process")
def fail_isolated(text: str) -> str:
    raise RuntimeError(f"cannot handle {text}")


@registry.tool(description="End the worker process abruptly.", isolation="process")
def die() -> str:
    os._exit(3)
