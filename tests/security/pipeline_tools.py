"""Tools for the call pipeline's table (test_call_pipeline.py), not an example: each once as a plain tool and once as
a task (`task_` names, task="optional"), so every way into the pipeline calls the same functions."""

import anyio

from toolwire_server import Registry
from toolwire_server.tools.registry import TaskSupport

registry = Registry("toolwire-pipeline-tools")
WAYS: tuple[tuple[str, TaskSupport | None], ...] = (("", None), ("task_", "optional"))


async def report(text: str) -> str:
    """Report the text back."""
    return text


async def slow(seconds: float) -> str:
    """Sleep `seconds`, longer than its timeout."""
    await anyio.sleep(seconds)
    return "slept"


async def big(n: int) -> str:
    """A result of `n` characters."""
    return "x" * n


async def hold(seconds: float) -> str:
    """Hold `seconds` (a task that runs for a while)."""
    await anyio.sleep(seconds)
    return "held"


for prefix, task in WAYS:
    registry.add(report, name=f"{prefix}report", task=task)
    registry.add(slow, name=f"{prefix}slow", task=task, timeout_s=1.0)
    registry.add(big, name=f"{prefix}big", task=task)
registry.add(hold, name="task_hold", task="optional")
