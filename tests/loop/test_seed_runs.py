"""The seed's four scripted runs, against the real support tool server over stdio, end exactly as the seed says."""

from toolwire_client.config import RunLimits
from toolwire_client.loop import Agent
from toolwire_client.models.providers import make_scripted
from toolwire_client.run.ordering import check_order
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.toolbox import ToolBox

from .conftest import TASK


async def run(source: McpSource, script: str, limits: RunLimits):  # type: ignore[no-untyped-def]
    return await Agent.of(make_scripted(script), ToolBox([source]), limits=limits).run(TASK)


async def test_recovers_from_a_bad_call(support_source: McpSource) -> None:
    state = await run(support_source, "recovers", RunLimits(max_steps=6, max_tokens=3000))
    assert (state.status, state.final_answer) == ("done", "Order A123 costs 5900.0 rupees with 18% GST.")
    assert state.stop_reason == "final_answer" and len(state.steps) == 4
    first = state.steps[0].results[0]
    assert first.is_error and first.error_kind == "bad_arguments" and "order_id" in first.content
    assert state.report is not None and "calculator once (ok)" in state.report
    assert state.trace_id is not None and len(state.trace_id) == 32


async def test_repeats_itself_stops_at_the_third_identical_call(support_source: McpSource) -> None:
    state = await run(support_source, "repeats", RunLimits(max_steps=6, max_tokens=3000))
    assert (state.status, state.stop_reason) == ("stopped", "repeated_call")
    assert len(state.steps) == 3
    (third,) = state.steps[2].results  # the third call was not run, only answered so the list stays valid
    assert third.error_kind == "blocked" and third.content.startswith("ERROR: not run: stopped by a repeated call")
    check_order(state.messages)
    assert state.report is not None and "third time" in state.report and "no final answer" in state.report


async def test_wanders_stops_at_the_step_limit(support_source: McpSource) -> None:
    state = await run(support_source, "wanders", RunLimits(max_steps=4, max_tokens=3000))
    assert (state.status, state.stop_reason, len(state.steps)) == ("stopped", "step_limit", 4)
    assert state.report is not None
    assert state.report.startswith("stopped at the step limit after 4 steps; called get_order 4 times (0 ok)")


async def test_tight_budget_stops_before_overspending(support_source: McpSource) -> None:
    state = await run(support_source, "recovers", RunLimits(max_steps=6, max_tokens=1500))
    assert (state.status, state.stop_reason) == ("stopped", "token_budget")
    assert state.final_answer is None and 0 < len(state.steps) < 4
    assert state.usage.total_tokens <= 1500
