"""The per-step records save to the very JSON they saved to as pydantic models (issue 34 §3): a run holding every kind
of record, built here, saves byte-identical to data/run_every_record*.json (written by the code before the records
became dataclasses), whole and as the store lays it out; and a run recorded then (data/run_recorded_*.json) loads,
is approved and resumed, and replays identical.

`python tests/store/test_records_saved_format.py` writes the golden files again (only ever with the old code)."""

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from seed_tools import seed_source

from toolwire_client.config import RunConfig, RunLimits
from toolwire_client.loop import Agent
from toolwire_client.models.base import ModelReply
from toolwire_client.models.providers import make_scripted
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.replay import replay
from toolwire_client.run.pending import PendingCall
from toolwire_client.run.plan_state import Plan, PlanStep
from toolwire_client.run.state import RunState, SamplingRecord, StepRecord
from toolwire_client.store import SqlRunStore, approvals
from toolwire_client.store.layout import split
from toolwire_client.tools.registry_source import RegistrySource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_server import Registry
from toolwire_shared import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolPolicy,
    ToolResult,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from toolwire_shared.elicitation import InputAnswer, InputWanted
from toolwire_shared.media import MediaPart
from toolwire_shared.results import SubRun, TaskRun

DATA = Path(__file__).parent / "data"
EVERY = DATA / "run_every_record.json"
EVERY_SPLIT = DATA / "run_every_record.split.json"
WAITING = DATA / "run_recorded_waiting.json"
RECORDED = DATA / "run_recorded_seed.json"
T0 = datetime(2026, 12, 5, 12, 0, 0, 123456, tzinfo=UTC)
PIXEL = MediaPart(kind="image", mime_type="image/png", data="iVBORw0KGgo=")


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def every_record() -> RunState:
    """A run with every kind of record and every optional field of each, set and unset."""
    full = Usage(
        input_tokens=1200,
        output_tokens=80,
        cache_read_tokens=900,
        cache_write_tokens=200,
        cache_write_1h_tokens=50,
        reasoning_tokens=30,
    )
    calls = [
        ToolCall(id="c1", name="get_order", arguments={"order_id": "A123", "nested": {"b": [1, 2.5, None], "a": "é‮"}}),
        ToolCall(id="c2", name="calc", arguments={"x": 1}, raw_arguments='{"x": 1}'),
        ToolCall(id="c3", name="calc", raw_arguments='{"x": ', parse_error="unterminated JSON"),
        ToolCall(id="c4", name="delegate", arguments={"task": "sub"}),
        ToolCall(id="c5", name="ask", arguments={}),
    ]
    question = InputWanted(
        key="q1",
        mode="form",
        message="Which size?",
        requested_schema={"type": "object", "properties": {"size": {"type": "string"}}},
        era="2026-07-28",
        request_state="sealed",
        earlier=[InputAnswer(action="accept", content={"n": 1}, by="ann")],
    )
    results = [
        ToolResult(call_id="c1", name="get_order", content='{"item": "keyboard"}', structured={"item": "keyboard"}),
        ToolResult(call_id="c2", name="calc", content="boom", is_error=True, error_kind="tool_failed", duration_s=1),
        ToolResult(call_id="c3", name="calc", content="bad", is_error=True, error_kind="bad_arguments"),
        ToolResult(
            call_id="c4",
            name="delegate",
            content="sub done",
            duration_s=0.25,
            started_at=at(1),
            attempts=2,
            sub_run=SubRun(run_id="run-child", status="done", steps=3, usage=full, cost_usd=0.01),
        ),
        ToolResult(call_id="c5", name="ask", content="waiting", input_wanted=question),
        ToolResult(
            call_id="c6",
            name="pic",
            content="an image, cut",
            truncated=True,
            media=[PIXEL],
            links=["file:///a.txt"],
            retry_after_s=2,
            task=TaskRun(task_id="t-1", status="completed"),
        ),
        ToolResult(
            call_id="c7", name="slow", content="limited", is_error=True, error_kind="limited", retry_after_s=1.5
        ),
    ]
    spec = ToolSpec(name="get_order", description="Look up an order.", input_schema={"type": "object"}, source="shop")
    risky_spec = ToolSpec(
        name="refund",
        description="Refund.",
        input_schema={"type": "object"},
        policy=ToolPolicy(risky=True, timeout_s=5),
    )
    reply = ModelReply(
        message=AssistantMessage(
            text="thinking", tool_calls=calls, provider="anthropic", provider_content=[{"type": "thinking"}]
        ),
        usage=full,
        finish_reason="tool_use",
        response_id="resp_1",
        response_model="claude",
        latency_s=0.5,
        attempts=2,
        waited_s=1,
    )
    messages: list[Message] = [SystemMessage(content="be brief"), UserMessage(content="refund A123")]
    steps: list[StepRecord] = []
    for n in range(6):  # enough for the store's layout to settle some (a segment row as well as a header)
        messages.append(reply.message if n == 0 else AssistantMessage(text=f"turn {n}"))
        messages.append(ToolResultMessage(call_id=f"m{n}", name="get_order", content=f"result {n}"))
        steps.append(
            StepRecord(
                index=n,
                kind=("act", "review", "plan")[n % 3],
                plan_step=(1, 2) if n == 2 else None,
                model_text=f"turn {n}",
                tool_calls=calls if n == 0 else [],
                results=results if n == 0 else [],
                usage=full if n == 0 else Usage(input_tokens=10 * n),
                usage_so_far=full + Usage(input_tokens=n),
                cost_usd=0.002 if n % 2 else None,
                model_latency_s=0.1 * n,
                started_at=at(n),
                finished_at=at(n + 0.5) if n < 5 else None,
                model_reply=reply if n == 0 else None,
                tools=[spec, risky_spec] if n == 1 else None,
            )
        )
    messages.append(ToolResultMessage(call_id="c2", name="calc", content="boom", is_error=True))
    messages.append(ToolResultMessage(call_id="c6", name="pic", content="an image", media=[PIXEL]))
    pending = [
        PendingCall(call=calls[0], state="pending_approval", args_hash="h0", since=at(10), approval_reason="risky"),
        PendingCall(
            call=calls[1], state="approved", args_hash="h1", since=at(11), decision_reason="ok", decided_by="ann"
        ),
        PendingCall(
            call=calls[1], state="rejected", args_hash="h2", since=at(12), decision_reason="no", decided_by="bo"
        ),
        PendingCall(call=calls[1], state="sent", args_hash="h3", since=at(13), idempotent=True, task_id="t-2"),
        PendingCall(call=calls[1], state="done", args_hash="h4", since=at(14)),
        PendingCall(call=calls[3], state="waiting_on_child", args_hash="h5", since=at(15), child_run_id="run-child"),
        PendingCall(call=calls[4], state="pending_input", args_hash="h6", since=at(16), input=question),
        PendingCall(
            call=calls[4],
            state="answered",
            args_hash="h7",
            since=at(17),
            input=question,
            answer=InputAnswer(action="accept", content={"size": "L"}, by="ann"),
            decided_by="ann",
        ),
    ]
    return RunState(
        run_id="run-every-record",
        agent_name="a",
        task="refund A123",
        model="scripted:x",
        status="waiting_for_approval",
        messages=messages,
        steps=steps,
        usage=full,
        cost_usd=0.05,
        pending=pending,
        stop_reason="waiting_for_approval",
        report="waiting",
        trace_id="0" * 32,
        started_at=T0,
        updated_at=at(20),
        plan=Plan(steps=[PlanStep(text="look", name="l", tools=["get_order"]), PlanStep(text="answer")]),
        config={"model": "scripted:x"},
        version=3,
        parent_run_id="run-parent",
        parent_call_id="p1",
        children={"c4": SubRun(run_id="run-child", status="waiting_for_approval", steps=1)},
        sampling=[
            SamplingRecord(
                server="s",
                call_id="c1",
                step=1,
                asked=[SystemMessage(content="sys"), UserMessage(content="q")],
                max_tokens=100,
                answer="a",
                usage=Usage(input_tokens=5, output_tokens=1),
                cost_usd=0.001,
                at=at(5),
            ),
            SamplingRecord(server="s", refused="not allowed", at=at(6)),
        ],
    )


def laid_out(state: RunState) -> dict[str, Any]:
    """The store's two rows of a save: the header and the segment of the settled items."""
    parts = split(state, object(), state.version + 1, at(30))
    return {"header": parts.header, "segment": parts.segment}


def test_a_run_with_every_record_saves_byte_identical_to_the_golden_file() -> None:
    assert every_record().model_dump_json() == EVERY.read_text(encoding="utf-8")


def test_it_loads_and_saves_back_byte_identical() -> None:
    golden = EVERY.read_text(encoding="utf-8")
    loaded = RunState.model_validate_json(golden)
    assert loaded.model_dump_json() == golden
    assert loaded.model_dump() == every_record().model_dump()


def test_the_store_lays_it_out_byte_identical() -> None:
    assert laid_out(every_record()) == json.loads(EVERY_SPLIT.read_text(encoding="utf-8"))
    assert laid_out(RunState.model_validate_json(EVERY.read_text(encoding="utf-8"))) == laid_out(every_record())


async def test_a_run_saved_by_the_old_records_is_approved_resumed_and_replays_identical(store: SqlRunStore) -> None:
    golden = WAITING.read_text(encoding="utf-8")
    old = RunState.model_validate_json(golden)
    assert old.model_dump_json() == golden
    assert [p.state for p in old.pending] == ["pending_approval"]
    old.version = 0  # a new run of this store's
    await store.save(old)
    await approvals.approve(store, old.run_id, old.pending[0].call.id)
    agent = Agent(refund_model(), ToolBox([refund_source()]), store=store)
    done = await agent.resume(old.run_id)
    assert (done.status, done.final_answer, done.pending) == ("done", "refunded", [])
    assert [m.call_id for m in done.messages if isinstance(m, ToolResultMessage)] == ["o", "r"]
    outcome = await replay(await store.load(old.run_id))
    assert outcome.identical, outcome.describe()


async def test_a_recorded_run_of_the_old_records_replays_identical(store: SqlRunStore) -> None:
    golden = RECORDED.read_text(encoding="utf-8")
    old = RunState.model_validate_json(golden)
    assert old.model_dump_json() == golden
    old.version = 0
    await store.save(old)
    loaded = await store.load(old.run_id)
    outcome = await replay(loaded)
    assert outcome.identical, outcome.describe()
    assert [c.id for c in outcome.sent] == [r.call_id for s in loaded.steps for r in s.results]


def get_order(order_id: str) -> dict[str, Any]:
    """Look up one order by its id."""
    return {"item": "keyboard", "unit_price": 2500, "qty": 2}


async def issue_refund(order_id: str, amount_cents: int) -> dict[str, Any]:
    """Refund an order."""
    return {"refund_id": "re_1", "amount_cents": amount_cents}


def refund_source() -> RegistrySource:
    registry = Registry("local")
    registry.add(get_order, idempotent=True)
    registry.add(issue_refund, risky=True)
    return RegistrySource(registry)


def refund_model() -> ScriptedModel:
    first = [
        ToolCall(id="o", name="get_order", arguments={"order_id": "A123"}),
        ToolCall(id="r", name="issue_refund", arguments={"order_id": "A123", "amount_cents": 2500}),
    ]

    def script(messages: list[Message]) -> AssistantMessage:
        turn = sum(isinstance(m, AssistantMessage) for m in messages)
        return AssistantMessage(tool_calls=first) if turn == 0 else AssistantMessage(text="refunded")

    return ScriptedModel(script)


async def _write_golden() -> None:  # pragma: no cover - run by hand with the code before the change
    from toolwire_client.store import open_store

    state = every_record()
    EVERY.write_text(state.model_dump_json(), encoding="utf-8")
    EVERY_SPLIT.write_text(json.dumps(laid_out(state)), encoding="utf-8")
    scratch = Path(sys.argv[1])
    store = await open_store(str(scratch / "golden.db"))
    try:
        waiting = await Agent(refund_model(), ToolBox([refund_source()]), store=store).run("refund A123")
        assert waiting.status == "waiting_for_approval", waiting.report
        WAITING.write_text((await store.load(waiting.run_id)).model_dump_json(), encoding="utf-8")
        config = RunConfig(model="scripted:recovers", name="seed", limits=RunLimits(max_steps=6))
        tools = ToolBox([seed_source()])
        recorded = await Agent(make_scripted("recovers"), tools, config=config, store=store).run("A123 with GST?")
        RECORDED.write_text((await store.load(recorded.run_id)).model_dump_json(), encoding="utf-8")
    finally:
        await store.aclose()


if __name__ == "__main__":  # pragma: no cover
    import anyio

    anyio.run(_write_golden)
