"""Plan-and-execute over the real support server on stdio: a numbered plan first (parsed strictly, re-asked once),
then its steps one by one through the same loop; a step the model reports as failed is replanned within
max_replans; the plan is shown in the step table, saved with the run, traced, and replays identically."""

import json
from pathlib import Path
from typing import Any

import pytest

from helpers.telemetry import install
from toolwire_client import texts
from toolwire_client.cli.trace import step_lines
from toolwire_client.config import RunConfig, RunLimits
from toolwire_client.loop import Agent
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.models.seed_scripts import PLAN, asked_for_plan, planned, replans
from toolwire_client.replay import replay
from toolwire_client.run import exits
from toolwire_client.run.ordering import check_order
from toolwire_client.run.state import RunState
from toolwire_client.store import open_store
from toolwire_client.strategies.plan import Planning, PlanStep, parse_plan
from toolwire_client.strategies.review import Review
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_otel import attributes
from toolwire_shared.messages import AssistantMessage, Message, ToolCall, UserMessage

from .conftest import TASK

ANSWER = "Order A123 costs 5900.0 INR with 18% GST."
PLANNED = [PlanStep(text=t) for t in parse_plan(PLAN.format(order="A123"))]


async def run(
    source: McpSource, model: ScriptedModel, db: Path | None = None, **settings: Any
) -> tuple[RunState, list[str]]:
    """The run and its live step table, as `toolwire run` prints it; `settings`: the RunConfig's (plan, limits,
    review), with planning on unless `plan` says otherwise."""
    config = RunConfig(model=f"scripted:{model.model}", **({"plan": Planning()} | settings))
    rows: list[str] = []
    store = await open_store(str(db)) if db else None
    try:
        async with ToolBox([source]) as box:
            agent = Agent(model, box, config=config, store=store, on_step=lambda s, st: rows.extend(step_lines(s, st)))
            return await agent.run(TASK), rows
    finally:
        if store is not None:
            await store.aclose()


def asked(state: RunState) -> list[str]:
    return [m.content for m in state.messages if isinstance(m, UserMessage)][1:]


async def test_the_plan_is_parsed_shown_saved_and_its_steps_run_in_order(
    support_source: McpSource, tmp_path: Path
) -> None:
    telemetry = install()
    telemetry.spans.clear()
    state, rows = await run(support_source, ScriptedModel(planned, name="planned"), db=tmp_path / "runs.sqlite3")
    assert state.status == "done" and state.final_answer == ANSWER
    assert [s.kind for s in state.steps] == ["plan"] + ["act"] * 5
    assert [s.plan_step for s in state.steps] == [None, (1, 3), (1, 3), (2, 3), (2, 3), (3, 3)]
    assert [c.name for s in state.steps for c in s.tool_calls] == ["get_order", "calculator"]
    assert state.plan is not None and state.plan.steps == PLANNED and state.plan.finished
    assert state.plan.outputs[-1] == ANSWER and state.plan.replans == 0
    assert asked(state) == [
        texts.plan_request(8),
        *(texts.plan_step(i, 3, s.text) for i, s in enumerate(PLANNED, 1)),
    ]
    check_order(state.messages)
    assert rows[:3] == [
        f"step 1 | plan: {i}. {s.text} | tokens so far {state.steps[0].usage.total_tokens}"
        for i, s in enumerate(PLANNED, 1)
    ]
    assert [row.split(" | ")[1][:26] for row in rows[3:]] == [
        'get_order({"order_id": "A1',
        "step 1 of 3 done: Order A1",
        'calculator({"expression": ',
        "step 2 of 3 done: The tota",
        "final: Order A123 costs 59",
    ]

    store = await open_store(str(tmp_path / "runs.sqlite3"))
    try:
        saved = await store.load(state.run_id)
    finally:
        await store.aclose()
    assert saved.plan == state.plan and saved.steps[0].kind == "plan" and saved.steps[1].plan_step == (1, 3)

    chats = [s for s in telemetry.spans.get_finished_spans() if s.name.startswith("chat")]
    assert [(s.attributes or {}).get(attributes.TOOLWIRE_STEP_KIND) for s in chats] == ["plan"] + [None] * 5
    agent_span = next(s for s in telemetry.spans.get_finished_spans() if s.name.startswith("invoke_agent"))
    made = [e for e in agent_span.events if e.name == attributes.TOOLWIRE_PLAN_EVENT]
    assert [(e.attributes or {}).get(attributes.TOOLWIRE_PLAN_STEPS) for e in made] == [3]

    replayed = await replay(saved)
    assert replayed.identical, replayed.describe()
    assert replayed.replayed.plan == state.plan and replayed.replayed.final_answer == ANSWER


async def test_a_failed_step_is_replanned_and_the_new_plan_runs(support_source: McpSource) -> None:
    state, rows = await run(support_source, ScriptedModel(replans, name="replans"), plan=Planning(max_replans=1))
    assert state.status == "done" and state.final_answer == ANSWER
    assert [s.kind for s in state.steps] == ["plan", "act", "act", "plan"] + ["act"] * 5
    assert state.steps[3].plan_step is None and state.steps[2].plan_step == (1, 3)
    assert state.steps[2].model_text.startswith(texts.STEP_FAILED)
    assert state.plan is not None and state.plan.replans == 1 and state.plan.steps == PLANNED
    failed_step = "Find order A123 among the customer's orders"
    why = "no orders for customer A123; A123 looks like an order id"
    assert texts.replan_request(1, 3, failed_step, why, 8) in asked(state)
    assert f"step 3 | step 1 of 3 failed: STEP FAILED: {why}" in " ".join(rows)
    check_order(state.messages)
    replayed = await replay(state)
    assert replayed.identical, replayed.describe()


async def test_with_no_replan_left_a_failed_step_stops_the_run(support_source: McpSource) -> None:
    state, _ = await run(support_source, ScriptedModel(replans, name="replans"), plan=Planning(max_replans=0))
    assert (state.status, state.stop_reason) == ("stopped", "plan_failed") and state.final_answer is None
    assert state.report is not None and state.report.startswith(
        "stopped: step 1 of 3 (Find order A123 among the customer's orders) failed (no orders for customer A123"
    )
    assert [s.kind for s in state.steps] == ["plan", "act", "act"]
    check_order(state.messages)


async def test_a_step_that_keeps_failing_gets_max_replans_new_plans_then_the_run_stops(
    support_source: McpSource,
) -> None:
    def always_fails(messages: list[Message]) -> AssistantMessage:
        if asked_for_plan(messages):
            return AssistantMessage(text="1. Find order A123 among the customer's orders\n2. Answer")
        return replans(messages)

    state, _ = await run(support_source, ScriptedModel(always_fails, name="fails"), plan=Planning(max_replans=1))
    assert state.stop_reason == "plan_failed" and "no replan left" in (state.report or "")
    assert [s.kind for s in state.steps].count("plan") == 2 and state.plan is not None and state.plan.replans == 1
    check_order(state.messages)


async def test_a_plan_that_does_not_parse_is_re_asked_once_then_the_run_stops(support_source: McpSource) -> None:
    prose = "Sure! First I will look up the order, then compute the total."

    def chatty(messages: list[Message]) -> AssistantMessage:
        return AssistantMessage(text=prose) if asked_for_plan(messages) else planned(messages)

    state, rows = await run(support_source, ScriptedModel(chatty, name="chatty"))
    assert (state.status, state.stop_reason) == ("stopped", "plan_failed")
    assert state.report is not None and state.report.startswith(
        f"stopped: the model's plan did not parse after one re-ask ({texts.plan_unnumbered(1, prose)})"
    )
    assert asked(state) == [texts.plan_request(8), texts.plan_retry(texts.plan_unnumbered(1, prose))]
    assert [s.kind for s in state.steps] == ["plan", "plan"] and state.plan is None
    assert rows[0].startswith("step 1 | plan (did not parse): Sure!")


async def test_one_bad_plan_then_a_good_one_runs_and_a_plan_that_calls_tools_gets_them_answered(
    support_source: McpSource,
) -> None:
    def misnumbered_then_tools_then_good(messages: list[Message]) -> AssistantMessage:
        plans = sum(1 for m in messages if isinstance(m, UserMessage) and "the plan only" in m.content)
        if not asked_for_plan(messages):
            return planned(messages)
        if plans == 1:
            return AssistantMessage(tool_calls=[ToolCall(id="p1", name="get_order", arguments={"order_id": "A123"})])
        return planned(messages)

    state, _ = await run(support_source, ScriptedModel(misnumbered_then_tools_then_good, name="eager"))
    assert state.status == "done" and state.final_answer == ANSWER
    first = state.steps[0]
    assert first.kind == "plan" and [(r.error_kind, r.content) for r in first.results] == [
        ("blocked", texts.PLAN_NO_TOOLS)
    ]
    assert asked(state)[1] == texts.plan_retry(texts.PLAN_CALLED_TOOLS)
    check_order(state.messages)

    def misnumbered(messages: list[Message]) -> AssistantMessage:
        if asked_for_plan(messages):
            return AssistantMessage(text="1. Look up order A123\n3. Answer")
        return planned(messages)

    bad, _ = await run(support_source, ScriptedModel(misnumbered, name="misnumbered"))
    assert asked(bad)[1] == texts.plan_retry(texts.plan_misnumbered(2, "3"))


async def test_the_limits_apply_across_the_whole_plan(support_source: McpSource) -> None:
    state, _ = await run(support_source, ScriptedModel(planned, name="planned"), limits=RunLimits(max_steps=4))
    assert (state.status, state.stop_reason) == ("stopped", "step_limit") and len(state.steps) == 4
    assert state.steps[0].kind == "plan"  # the plan call is a step like any other

    whole, _ = await run(support_source, ScriptedModel(planned, name="planned"))
    budget = whole.usage.total_tokens - 1
    cut, _ = await run(support_source, ScriptedModel(planned, name="planned"), limits=RunLimits(max_tokens=budget))
    assert cut.stop_reason == "token_budget" and cut.usage.total_tokens <= budget
    check_order(cut.messages)


async def test_a_planned_run_reviews_only_its_final_answer(support_source: McpSource) -> None:
    def reviewed(messages: list[Message]) -> AssistantMessage:
        last = messages[-1]
        if isinstance(last, UserMessage) and last.content.startswith("Review your last answer"):
            return AssistantMessage(text=texts.REVIEW_APPROVED)
        return planned(messages)

    review = Review(criteria=["Give the currency as INR."])
    state, rows = await run(support_source, ScriptedModel(reviewed, name="reviewed"), review=review)
    assert state.final_answer == ANSWER and [s.kind for s in state.steps][-2:] == ["act", "review"]
    assert [s.kind for s in state.steps].count("review") == 1
    assert json.dumps(rows).count("review:") == 1
    assert exits.PlanFailed.code == "plan_failed"


async def test_a_step_that_waits_for_approval_resumes_into_the_rest_of_the_plan(support_source: McpSource) -> None:
    def refunds(messages: list[Message]) -> AssistantMessage:
        if asked_for_plan(messages):
            return AssistantMessage(text="1. Refund one keyboard of order A123\n2. Answer the customer")
        last = messages[-1]
        if isinstance(last, UserMessage) and last.content.startswith("Step 1 of 2"):
            refund = ToolCall(id="r1", name="issue_refund", arguments={"order_id": "A123", "amount_cents": 2500})
            return AssistantMessage(tool_calls=[refund])
        if isinstance(last, UserMessage):
            return AssistantMessage(text="Refunded one keyboard of order A123.")
        return AssistantMessage(text=f"Refund done: {last.text if isinstance(last, AssistantMessage) else 'ok'}")

    config = RunConfig(model="scripted:refunds", plan=Planning())
    async with ToolBox([support_source]) as box:
        agent = Agent(ScriptedModel(refunds, name="refunds"), box, config=config)
        paused = await agent.run("Refund one keyboard of order A123.")
        assert paused.status == "waiting_for_approval" and paused.plan is not None and paused.plan.current == 1
        paused.pending[0].state = "approved"
        done = await agent.resume(paused)
    assert done.status == "done" and done.final_answer == "Refunded one keyboard of order A123."
    assert [s.plan_step for s in done.steps] == [None, (1, 2), (1, 2), (2, 2)]
    assert done.plan is not None and done.plan.finished and len(done.plan.outputs) == 2
    check_order(done.messages)


async def test_the_plan_steps_are_on_the_trace_when_content_capture_is_on(
    support_source: McpSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    telemetry = install()
    telemetry.spans.clear()
    await run(support_source, ScriptedModel(replans, name="replans"))
    agent_span = next(s for s in telemetry.spans.get_finished_spans() if s.name.startswith("invoke_agent"))
    made = [dict(e.attributes or {}) for e in agent_span.events if e.name == attributes.TOOLWIRE_PLAN_EVENT]
    assert [(e[attributes.TOOLWIRE_PLAN_REPLAN], e[attributes.TOOLWIRE_PLAN_STEPS]) for e in made] == [(0, 3), (1, 3)]
    assert list(made[1][attributes.TOOLWIRE_PLAN_TEXT]) == [s.text for s in PLANNED]
