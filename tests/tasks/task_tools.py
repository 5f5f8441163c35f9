"""Tools the task tests serve: one that runs until stopped (and says which process it runs in), the same one that
runs only as a task, and a quick one."""

import os

import anyio

from toolwire_server import Registry, ToolContext

registry = Registry("toolwire-task-tests")


@registry.tool(
    description="Works for `seconds`, reporting progress; writes its pid to `marker` first.", task="optional"
)
async def long_job(seconds: float, marker: str, ctx: ToolContext) -> str:
    await anyio.Path(marker + ".runs").write_text(await _runs(marker) + "run\n")  # a tool run twice shows it
    await anyio.Path(marker).write_text(str(os.getpid()))
    for step in range(int(seconds * 10)):
        await ctx.report_progress(step, seconds * 10, "working")
        await anyio.sleep(0.1)
    return f"done after {seconds:g} s"


registry.add(long_job, name="long_task_job", task="required", description="long_job, run only as a task.")


async def _runs(marker: str) -> str:
    path = anyio.Path(marker + ".runs")
    return await path.read_text() if await path.exists() else ""


@registry.tool(description="Says hello at once (runs only as a task).", task="required")
def quick_job(name: str) -> str:
    return f"hello {name}"
