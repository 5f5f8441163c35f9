"""An async tool on the loop runs its first step before any timeout scope is opened (execution.py `_within`): a tool
that returns without awaiting needs none. These check that the time limit still holds for the rest: it counts from
before the first step, and a tool that awaits is cancelled at its limit."""

import time

import anyio

from toolwire_server import Registry
from toolwire_server.auth.access import ALL_TOOLS
from toolwire_server.tools.execution import call_tool
from toolwire_shared.results import kind_of

LIMIT_S = 0.3


async def quick(text: str) -> str:
    """Returns without awaiting."""
    return text


async def busy_then_waits(busy_s: float, wait_s: float) -> str:
    """Works `busy_s` without awaiting, then awaits `wait_s`."""
    time.sleep(busy_s)  # the tool's own blocking work, in its first step
    await anyio.sleep(wait_s)
    return "done"


def registry() -> Registry:
    tools = Registry("first-step")
    tools.add(quick, timeout_s=LIMIT_S)
    tools.add(busy_then_waits, timeout_s=LIMIT_S)
    return tools


async def test_a_tool_that_never_awaits_answers_and_one_that_awaits_past_its_limit_times_out() -> None:
    tools = registry()
    answered = await call_tool(tools, ALL_TOOLS, "quick", {"text": "hi"}, max_result_chars=1000)
    assert kind_of(answered) is None and answered.content[0].text == "hi"  # type: ignore[union-attr]
    hung = await call_tool(tools, ALL_TOOLS, "busy_then_waits", {"busy_s": 0, "wait_s": 30}, max_result_chars=1000)
    assert kind_of(hung) == "timeout"


async def test_the_limit_counts_the_first_step_too() -> None:
    """0.2 s of work and then a 0.2 s wait pass a 0.3 s limit: a limit started after the first step would not."""
    tools = registry()
    arguments = {"busy_s": 0.2, "wait_s": 0.2}
    result = await call_tool(tools, ALL_TOOLS, "busy_then_waits", arguments, max_result_chars=1000)
    assert kind_of(result) == "timeout"
    within = await call_tool(tools, ALL_TOOLS, "busy_then_waits", {"busy_s": 0, "wait_s": 0}, max_result_chars=1000)
    assert kind_of(within) is None
