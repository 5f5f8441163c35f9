"""Tools for the replica tests (not an example): which process answered, so a test sees where each call went."""

import os
from pathlib import Path

import anyio

from toolwire_server import Registry, ToolContext

registry = Registry("toolwire-replica-tools")


@registry.tool(
    description="Which replica and process answered: 'NAME:PID' (NAME from $TOOLWIRE_TEST_REPLICA); `turn` only "
    "makes each call of a run a different call.",
    idempotent=True,
)
async def whoami(turn: int = 0) -> str:
    return whoami_now()


def whoami_now() -> str:
    return f"{os.environ.get('TOOLWIRE_TEST_REPLICA', '')}:{os.getpid()}"


@registry.tool(description="Write `marker`.started, then wait; write `marker`.cancelled when the call is cancelled.")
async def hold(marker: str) -> str:
    _note(marker + ".started")
    try:
        await anyio.sleep(120)
    except anyio.get_cancelled_exc_class():
        _note(marker + ".cancelled")  # no await here: the call is being cancelled
        raise
    return "held to the end"


@registry.tool(
    description="Report progress, then wait (at most `within_s`) until `release` exists: a progress event that is "
    "held back on its way to the client (a buffering proxy) leaves the call waiting."
)
async def progress_then_wait(release: str, ctx: ToolContext, within_s: float = 20) -> str:
    await ctx.report_progress(1, 2, "halfway")
    with anyio.move_on_after(within_s):
        # The file is the test's, written in another process: there is no event to wait on instead.
        while not await anyio.Path(release).exists():  # noqa: ASYNC110
            await anyio.sleep(0.02)
        return "released"
    return f"not released within {within_s:g} s"


def _note(path: str) -> None:
    Path(path).write_text(whoami_now())


def broken_in_workers() -> Registry:
    """The registry in the process that runs `serve`, a failure in the processes it spawns: a start that fails only
    in the workers (as when the code changed between the supervisor's load and theirs)."""
    import multiprocessing

    if multiprocessing.parent_process() is not None:
        raise RuntimeError("this registry cannot be loaded in a worker process")
    return registry
