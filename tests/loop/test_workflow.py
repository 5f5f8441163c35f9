"""The support desk workflow over the real support server on stdio: classify, look up the policy, draft the reply,
in that order, each step a model turn with only its own tools, in one run: one trace, one saved message list,
replayable; a step the model reports failed stops the run (a workflow is not replanned)."""

import json
import sys
from pathlib import Path

import pytest
from examples.support_workflow import SUPPORT_DESK, TICKET

from helpers.cli import REPO, clean_env, run_toolwire
from helpers.telemetry import install
from toolwire_client import texts
from toolwire_client.config import RunConfig
from toolwire_client.loop import Agent
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.models.seed_scripts import support_workflow
from toolwire_client.replay import replay
from toolwire_client.run.ordering import check_order
from toolwire_client.run.state import RunState
from toolwire_client.store import open_store
from toolwire_client.strategies.plan import Planning
from toolwire_client.strategies.workflow import Step, Workflow
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import AssistantMessage, Message, ToolCall, UserMessage

from .conftest import stdio_source


@pytest.fixture
def desk_source(tmp_path: Path) -> McpSource:
    """The support tools plus get_policy (examples.support_tools:desk), on stdio."""
    return stdio_source(
        "examples.support_tools:desk", "desk", {"TOOLWIRE_SUPPORT_DB": str(tmp_path / "support.sqlite3")}
    )


REPLY = "Dear customer, we are sorry about the keyboard in order A123. Our policy: the customer chooses a free"


async def run(source: McpSource, model: ScriptedModel, db: Path | None = None) -> RunState:
    config = RunConfig(model=f"scripted:{model.model}", workflow=SUPPORT_DESK)
    store = await open_store(str(db)) if db else None
    try:
        async with ToolBox([source]) as box:
            return await Agent(model, box, config=config, store=store).run(TICKET)
    finally:
        if store is not None:
            await store.aclose()


async def test_the_steps_run_in_order_in_one_run_one_trace_one_message_list(
    desk_source: McpSource, tmp_path: Path
) -> None:
    telemetry = install()
    telemetry.spans.clear()
    db = tmp_path / "runs.sqlite3"
    state = await run(desk_source, ScriptedModel(support_workflow, name="support_workflow"), db)
    assert state.status == "done" and state.final_answer is not None and state.final_answer.startswith(REPLY)
    assert [s.plan_step for s in state.steps] == [(1, 3), (2, 3), (2, 3), (3, 3), (3, 3)]
    assert [c.name for s in state.steps for c in s.tool_calls] == ["get_policy", "get_order"]
    assert state.plan is not None and state.plan.workflow and state.plan.outputs[0] == "damaged_item"
    policy = state.plan.outputs[1]
    steps = [m.content for m in state.messages if isinstance(m, UserMessage)][1:]
    assert [s.split(":", 1)[0] for s in steps] == [
        "Step 1 of 3 (classify)",
        "Step 2 of 3 (policy)",
        "Step 3 of 3 (reply)",
    ]
    assert "for a damaged_item ticket" in steps[1] and f"follow this policy: {policy} " in steps[2]  # earlier outputs
    assert "Tools for this step: get_policy." in steps[1] and "Do not call tools in this step." in steps[0]
    check_order(state.messages)

    spans = telemetry.spans.get_finished_spans()
    assert len([s for s in spans if s.name.startswith("invoke_agent")]) == 1
    assert len({s.context.trace_id for s in spans if s.name.startswith(("chat", "execute_tool", "invoke_agent"))}) == 1

    store = await open_store(str(db))
    try:
        saved = await store.load(state.run_id)
    finally:
        await store.aclose()
    assert saved.messages == state.messages and saved.plan == state.plan
    replayed = await replay(saved)
    assert replayed.identical, replayed.describe()


async def test_a_call_to_a_tool_the_step_does_not_allow_is_answered_not_run(desk_source: McpSource) -> None:
    def refunds_early(messages: list[Message]) -> AssistantMessage:
        last = messages[-1]
        if isinstance(last, UserMessage) and last.content.startswith("Step 3 of 3"):
            refund = ToolCall(id="r1", name="issue_refund", arguments={"order_id": "A123", "amount_cents": 2500})
            return AssistantMessage(tool_calls=[refund])
        return support_workflow(messages)

    state = await run(desk_source, ScriptedModel(refunds_early, name="refunds_early"))
    refused = next(s for s in state.steps if any(c.name == "issue_refund" for c in s.tool_calls))
    assert [(r.error_kind, r.content) for r in refused.results] == [
        ("blocked", texts.not_in_step("issue_refund", "reply", ["get_order"]))
    ]
    assert state.status == "done" and state.pending == []  # not run, so nothing waits for approval either
    check_order(state.messages)


async def test_a_failed_step_stops_the_workflow(desk_source: McpSource) -> None:
    def gives_up(messages: list[Message]) -> AssistantMessage:
        last = messages[-1]
        if isinstance(last, UserMessage) and last.content.startswith("Step 2 of 3"):
            return AssistantMessage(text="STEP FAILED: there is no policy for this")
        return support_workflow(messages)

    state = await run(desk_source, ScriptedModel(gives_up, name="gives_up"))
    assert (state.status, state.stop_reason) == ("stopped", "plan_failed")
    assert "step 2 of 3" in (state.report or "") and "a workflow is not replanned" in (state.report or "")


def test_a_workflow_that_cannot_run_says_what_is_wrong() -> None:
    with pytest.raises(ValueError, match=r"step 'reply' uses \{policy\}, which is not an earlier step"):
        Workflow([Step("classify", "Classify."), Step("reply", "Reply with {policy}."), Step("policy", "Look up.")])
    with pytest.raises(ValueError, match="two steps are named 'classify'"):
        Workflow([Step("classify", "a"), Step("classify", "b")])
    with pytest.raises(ValueError, match="must be a lower-case identifier"):
        Workflow([Step("Classify it", "a")])
    with pytest.raises(ValueError, match="either a plan the model makes"):
        RunConfig(model="scripted:planned", plan=Planning(), workflow=SUPPORT_DESK)
    again = RunConfig.model_validate(RunConfig(model="scripted:x", workflow=SUPPORT_DESK).model_dump(mode="json"))
    assert again.workflow == SUPPORT_DESK  # saved with the run and rebuilt (resume, replay)


def test_the_example_runs_with_no_key_and_its_run_is_saved(tmp_path: Path) -> None:
    env, db = clean_env(TOOLWIRE_SUPPORT_DB=str(tmp_path / "support.sqlite3")), str(tmp_path / "runs.sqlite3")
    example = [sys.executable, str(REPO / "examples" / "support_workflow.py")]
    done = run_toolwire("--db", db, env=env, command=example)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "step 1 | step 1 of 3 (classify) done: damaged_item" in done.stdout and "reply: Dear customer" in done.stdout
    run_id = done.stdout.split("saved as ", 1)[1].split(":", 1)[0]
    shown = run_toolwire("trace", "show", run_id, "--db", db, env=env)
    assert shown.returncode == 0 and 'get_policy({"topic": "damaged_item"})' in shown.stdout, shown.stderr
    data = json.loads(run_toolwire("trace", "show", run_id, "--json", "--db", db, env=env).stdout)
    assert [s["plan_step"] for s in data["steps"]] == [[1, 3], [2, 3], [2, 3], [3, 3], [3, 3]]
    assert [s["name"] for s in data["plan"]["steps"]] == ["classify", "policy", "reply"]
