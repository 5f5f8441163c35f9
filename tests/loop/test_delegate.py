"""Sub-agents over the real support server on stdio: a `delegate` call runs a second loop with its own message list,
its own tools and limits carved from what the parent has left, saved as a child run linked to the parent; the parent
reads only the child's short answer, and counts the child's usage and steps in its own totals."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from helpers.run_store import opened_store
from helpers.telemetry import install
from toolwire_client import texts
from toolwire_client.config import RunConfig, RunLimits
from toolwire_client.loop import Agent
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.models.seed_scripts import delegates, last_results, recovers
from toolwire_client.replay import replay
from toolwire_client.run.ordering import check_order
from toolwire_client.run.state import RunState
from toolwire_client.store import SqlRunStore
from toolwire_client.strategies.delegation import Delegation
from toolwire_client.tools.delegate import DelegateSource, child_run_id
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import AssistantMessage, Message, ToolCall, ToolResultMessage
from toolwire_shared.usage import Usage

from .conftest import TASK

SUPPORT_TOOLS = ["calculator", "get_order", "issue_refund", "search_orders"]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqlRunStore]:
    async with opened_store(str(tmp_path / "runs.db")) as opened:
        yield opened


def parent_asking(arguments: dict[str, object]) -> ScriptedModel:
    """A parent that delegates once with `arguments`, then answers with the result it read; the child is `recovers`."""

    def script(messages: list[Message]) -> AssistantMessage:
        if messages[0].content == texts.DELEGATE_SYSTEM:  # type: ignore[union-attr]
            return recovers(messages)
        results = last_results(messages)
        if not results:
            return AssistantMessage(tool_calls=[ToolCall(id="d1", name="delegate", arguments=arguments)])
        return AssistantMessage(text=f"read: {results[-1].content}")

    return ScriptedModel(script, name="parent")


async def run(
    source: McpSource,
    model: ScriptedModel,
    *,
    store: SqlRunStore | None = None,
    limits: RunLimits | None = None,
    delegation: Delegation | None = None,
) -> tuple[Agent, RunState]:
    config = RunConfig(model="scripted:delegates", limits=limits or RunLimits(), delegate=delegation or Delegation())
    async with ToolBox([source, DelegateSource()]) as box:
        agent = Agent(model, box, config=config, store=store)
        return agent, await agent.run(TASK)


async def test_the_parent_reads_only_the_childs_answer_and_counts_its_usage(
    support_source: McpSource, store: SqlRunStore
) -> None:
    _, parent = await run(support_source, ScriptedModel(delegates, name="delegates"), store=store)
    assert parent.status == "done", parent.report
    [call] = parent.steps[0].tool_calls
    child = await store.load(child_run_id(parent.run_id, call.id))
    assert child.status == "done" and child.final_answer == "Order A123 costs 5900.0 rupees with 18% GST."
    assert (child.parent_run_id, child.parent_call_id) == (parent.run_id, call.id)
    results = [m for m in parent.messages if isinstance(m, ToolResultMessage)]
    assert [(m.name, m.content) for m in results] == [("delegate", child.final_answer)]  # no child result here
    assert {m.name for m in child.messages if isinstance(m, ToolResultMessage)} == {"get_order", "calculator"}
    assert parent.final_answer == f"A sub-agent worked on it: {child.final_answer}"
    own = sum((s.usage for s in parent.steps), Usage())
    assert parent.usage == own + child.usage and parent.usage.total_tokens > own.total_tokens
    assert parent.steps_taken == len(parent.steps) + len(child.steps) == 2 + 4
    assert parent.children[call.id].run_id == child.run_id
    check_order(parent.messages)
    check_order(child.messages)
    offered = {t["name"] for t in child.config["tools"]}
    assert offered == set(SUPPORT_TOOLS)  # max_depth 1: the child is not offered delegate
    summaries = {s.run_id: s.parent_run_id for s in await store.list_runs()}
    assert summaries == {parent.run_id: None, child.run_id: parent.run_id}


async def test_the_childs_limits_are_carved_from_what_the_parent_has_left(support_source: McpSource) -> None:
    limits = RunLimits(max_steps=5, max_tokens=9000)
    _, parent = await run(
        support_source, ScriptedModel(delegates, name="d"), limits=limits, delegation=Delegation(max_steps=10)
    )
    [child] = parent.children.values()
    assert child.steps == 3  # 5, minus the parent's first step, minus the one it keeps to read the answer
    assert child.status == "stopped"  # `recovers` needs 4 steps: the child stops at its limit ...
    delegated = next(m for m in parent.messages if isinstance(m, ToolResultMessage))
    assert delegated.is_error and "step limit" in delegated.content
    assert parent.status == "done" and parent.steps_taken == 5  # ... and the parent still has its last step
    assert parent.usage.total_tokens <= limits.max_tokens  # type: ignore[operator]


async def test_a_childs_token_budget_leaves_the_parent_within_its_own(support_source: McpSource) -> None:
    limits = RunLimits(max_tokens=2500, output_reserve_tokens=64)
    _, parent = await run(support_source, ScriptedModel(delegates, name="d"), limits=limits)
    [child] = parent.children.values()
    assert child.status == "stopped", child  # the carve is smaller than the child's whole run
    assert parent.usage.total_tokens <= 2500
    assert parent.usage == sum((s.usage for s in parent.steps), Usage()) + child.usage


async def test_no_budget_left_for_a_child_is_said_and_nothing_runs(support_source: McpSource) -> None:
    _, parent = await run(support_source, ScriptedModel(delegates, name="d"), limits=RunLimits(max_steps=2))
    delegated = next(m for m in parent.messages if isinstance(m, ToolResultMessage))
    assert delegated.content == texts.delegate_no_budget("1 of 2 steps left")
    assert parent.children == {} and parent.status == "done"


async def test_asking_for_a_tool_the_parent_lacks_is_a_clear_error(support_source: McpSource) -> None:
    model = parent_asking({"task": "look up A123", "tools": ["get_order", "drop_tables"]})
    _, parent = await run(support_source, model)
    delegated = next(m for m in parent.messages if isinstance(m, ToolResultMessage))
    assert delegated.is_error
    assert delegated.content == texts.delegate_unknown_tools(["drop_tables"], SUPPORT_TOOLS)
    assert "Tools you may hand over: calculator, get_order, issue_refund, search_orders" in delegated.content
    bad = parent_asking({"tools": ["get_order"]})
    _, parent = await run(support_source, bad)
    delegated = next(m for m in parent.messages if isinstance(m, ToolResultMessage))
    assert delegated.is_error and "task: a non-empty string is required" in delegated.content


async def test_the_child_gets_only_the_tools_named_and_delegate_only_below_max_depth(
    support_source: McpSource, store: SqlRunStore
) -> None:
    model = parent_asking({"task": TASK, "tools": ["get_order"]})
    _, parent = await run(support_source, model, store=store)
    [child] = parent.children.values()
    saved = await store.load(child.run_id)
    assert [t["name"] for t in saved.config["tools"]] == ["get_order"]
    assert any(r.error_kind == "unknown_tool" for s in saved.steps for r in s.results)  # it had no calculator
    _, deeper = await run(
        support_source, ScriptedModel(delegates, name="d"), store=store, delegation=Delegation(max_depth=2)
    )
    [grand] = deeper.children.values()
    tools = {t["name"] for t in (await store.load(grand.run_id)).config["tools"]}
    assert tools == {*SUPPORT_TOOLS, "delegate"}


async def test_the_child_runs_as_invoke_agent_under_the_parents_delegate_span(support_source: McpSource) -> None:
    telemetry = install()
    telemetry.spans.clear()
    _, parent = await run(support_source, ScriptedModel(delegates, name="d"))
    spans = [s for s in telemetry.spans.get_finished_spans() if f"{s.context.trace_id:032x}" == parent.trace_id]
    by_id = {s.context.span_id: s for s in spans}
    [child_agent] = [s for s in spans if s.name == "invoke_agent agent.sub"]
    assert child_agent.parent is not None
    delegate_span = by_id[child_agent.parent.span_id]
    assert delegate_span.name == "execute_tool delegate"
    assert delegate_span.parent is not None and by_id[delegate_span.parent.span_id].name == "invoke_agent agent"
    children = sorted(s.name for s in spans if s.parent and s.parent.span_id == child_agent.context.span_id)
    assert children == ["chat d"] * 4 + ["execute_tool calculator"] + ["execute_tool get_order"] * 2
    print(span_tree(spans))
    assert span_tree(spans).splitlines()[0] == "invoke_agent agent"  # the run's trace has one root


def span_tree(spans: object) -> str:
    """The span names indented under their parents (printed for the report, checked above)."""
    items = list(spans)  # type: ignore[call-overload]
    kids: dict[int | None, list[object]] = {}
    for s in items:
        kids.setdefault(s.parent.span_id if s.parent else None, []).append(s)
    lines: list[str] = []

    def walk(span: object, depth: int) -> None:
        lines.append("  " * depth + span.name)  # type: ignore[attr-defined]
        for k in sorted(kids.get(span.context.span_id, []), key=lambda x: x.start_time):  # type: ignore[attr-defined]
            walk(k, depth + 1)

    for root in kids.get(None, []):
        walk(root, 0)
    return "\n".join(lines)


async def test_the_parent_replays_identically_from_the_record_and_so_does_the_child(
    support_source: McpSource, store: SqlRunStore
) -> None:
    _, parent = await run(support_source, ScriptedModel(delegates, name="d"), store=store)
    again = await replay(parent)
    assert again.identical, again.describe()
    assert [c.name for c in again.sent] == ["delegate"]  # answered from the record: no child runs
    assert again.replayed.usage == parent.usage  # the child's usage is counted from the recorded result
    [child] = parent.children.values()
    child_again = await replay(await store.load(child.run_id))
    assert child_again.identical, child_again.describe()


async def test_with_no_store_resuming_the_parent_finds_the_same_waiting_child(support_source: McpSource) -> None:
    config = RunConfig(model="scripted:delegates", delegate=Delegation())
    async with ToolBox([support_source, DelegateSource()]) as box:
        agent = Agent(ScriptedModel(delegates, name="d"), box, config=config)
        parent = await agent.run("Refund one item of order A123")
        assert parent.status == "waiting_for_approval"
        [waiting] = parent.pending
        steps_before = parent.children[waiting.call.id].steps
        again = await agent.resume(parent)  # nobody approved: the same child still waits, nothing ran again
    assert again.status == "waiting_for_approval" and [p.state for p in again.pending] == ["waiting_on_child"]
    assert again.pending[0].child_run_id == waiting.child_run_id
    assert again.children[waiting.call.id].steps == steps_before == 3
    assert again.usage == parent.usage  # the child made no model call on the way


def test_the_example_prints_the_nested_step_table() -> None:
    import subprocess
    import sys

    from .conftest import REPO

    done = subprocess.run(
        [sys.executable, "examples/delegate.py"], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith('step 1 | delegate({"task": "What does order A123 cost in total with 18% GST?"})')
    assert lines[1].startswith("  sub-agent run_") and lines[2].startswith('  step 1 | get_order({"id": "A123"})')
    assert lines[-2].startswith("step 2 | final: A sub-agent worked on it: Order A123 costs 5900.0 rupees")
