"""The loop's exits and guards with in-process tools (a Registry called through the server's own dispatch): fast, and
the same ToolBox path as MCP."""

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from toolwire_client import texts
from toolwire_client.config import RunLimits
from toolwire_client.loop import Agent
from toolwire_client.models.base import ModelCallFailed, ModelReply
from toolwire_client.models.providers import make_scripted
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.models.seed_scripts import last_results
from toolwire_client.run.hooks import Block
from toolwire_client.run.pending import PendingCall
from toolwire_client.store import approvals
from toolwire_client.store.sqlite import SqliteRunStore
from toolwire_client.tools.registry_source import RegistrySource
from toolwire_client.tools.source import RunContext, ToolRequest, ToolSource
from toolwire_client.tools.toolbox import ToolBox, idempotency_key
from toolwire_server import Registry
from toolwire_shared import errors
from toolwire_shared.messages import AssistantMessage, Message, ToolCall
from toolwire_shared.results import ToolResult
from toolwire_shared.tools import ToolSpec
from toolwire_shared.usage import Usage

ORDERS = {"A123": {"item": "keyboard", "unit_price": 2500, "qty": 2, "customer_id": "cus_8123"}}
REFUNDS: list[dict[str, Any]] = []


def get_order(order_id: str) -> dict[str, Any]:
    """Look up one order by its id."""
    if order_id not in ORDERS:
        raise ValueError(f"no order with id {order_id}; ids look like A123")
    return ORDERS[order_id]


async def issue_refund(order_id: str, amount_cents: int) -> dict[str, Any]:
    """Refund an order."""
    REFUNDS.append({"order_id": order_id, "amount_cents": amount_cents})
    return {"refund_id": f"re_{len(REFUNDS)}", "amount_cents": amount_cents}


async def slow(seconds: float) -> str:
    """Sleep."""
    await anyio.sleep(seconds)
    return "slow done"


def boom() -> str:
    """Always fails."""
    raise RuntimeError("the database is down")


class CountingSource(RegistrySource):
    """A RegistrySource that records what reached it, to prove what never did."""

    def __init__(self, registry: Registry):
        super().__init__(registry)
        self.received: list[tuple[str, dict[str, Any], str | None]] = []

    async def call(self, request: ToolRequest) -> ToolResult:
        self.received.append((request.call.name, request.call.arguments, request.idempotency_key))
        return await super().call(request)


def source() -> CountingSource:
    registry = Registry("local")
    registry.add(get_order, idempotent=True)
    registry.add(issue_refund, risky=True)
    registry.add(slow, timeout_s=0.3)
    registry.add(boom)
    return CountingSource(registry)


def only(fn: Any, name: str = "local", **policy: Any) -> CountingSource:
    """A source offering just `fn` (under `name`), with the given policy."""
    registry = Registry(name)
    registry.add(fn, **policy)
    return CountingSource(registry)


def turns(*replies: list[ToolCall] | str) -> ScriptedModel:
    """A model that plays the given turns in order: a list of calls, or a final text."""

    def script(messages: list[Message]) -> AssistantMessage:
        n = sum(isinstance(m, AssistantMessage) for m in messages)
        reply = replies[min(n, len(replies) - 1)]
        return AssistantMessage(text=reply) if isinstance(reply, str) else AssistantMessage(tool_calls=reply)

    return ScriptedModel(script)


def call(cid: str, name: str, **args: Any) -> ToolCall:
    return ToolCall(id=cid, name=name, arguments=args)


async def test_unknown_tools_and_unparseable_arguments_never_reach_a_tool() -> None:
    src = source()
    bad = ToolCall(id="b", name="get_order", raw_arguments='{"order_id": "A1', parse_error="unterminated string")
    state = await Agent(turns([call("u", "delete_everything"), bad], "ok"), ToolBox([src])).run("t")
    assert src.received == []
    unknown, unparsed = state.steps[0].results
    assert unknown.content == errors.unknown_tool("delete_everything", ["boom", "get_order", "issue_refund", "slow"])
    assert unparsed.error_kind == "bad_arguments" and "not a JSON object (unterminated string)" in unparsed.content
    assert state.status == "done"


async def test_a_failing_and_a_hanging_call_do_not_cancel_their_sibling() -> None:
    calls = [call("h", "slow", seconds=30), call("x", "boom"), call("g", "get_order", order_id="A123")]
    state = await Agent(turns(calls, "done"), ToolBox([source()])).run("t")
    hung, failed, ok = state.steps[0].results
    assert [r.call_id for r in state.steps[0].results] == ["h", "x", "g"]  # the model's order
    assert hung.error_kind == "timeout" and failed.content == errors.tool_failed("boom", "the database is down")
    assert json.loads(ok.content)["item"] == "keyboard" and state.status == "done"


async def test_hooks_block_and_change_calls() -> None:
    class Guard:
        async def before_tool(self, c: ToolCall) -> ToolCall | Block | None:
            if c.name == "boom":
                return Block("boom is switched off during the incident")
            if c.arguments.get("order_id") == "a123":
                return replace(c, arguments={"order_id": "A123"})
            return None

        async def after_tool(self, c: ToolCall, result: ToolResult) -> ToolResult | None:
            return replace(result, content=result.content.replace("cus_8123", "cus_***"))

    src = source()
    state = await Agent(
        turns([call("1", "boom"), call("2", "get_order", order_id="a123")], "done"), ToolBox([src]), hooks=(Guard(),)
    ).run("t")
    blocked, changed = state.steps[0].results
    assert blocked.error_kind == "blocked" and "boom is switched off during the incident" in blocked.content
    assert src.received == [("get_order", {"order_id": "A123"}, idempotency_key(state.run_id, "2"))]
    assert "cus_***" in changed.content and "cus_8123" not in changed.content


async def test_a_risky_call_pauses_the_run_and_runs_once_after_approval(tmp_path: Path) -> None:
    REFUNDS.clear()
    src = source()
    store = await SqliteRunStore(tmp_path / "runs.sqlite3").open()
    first = [call("o", "get_order", order_id="A123"), call("r", "issue_refund", order_id="A123", amount_cents=250000)]
    model = turns(first, "refunded")
    agent = Agent(model, ToolBox([src]), store=store)
    state = await agent.run("refund A123", run_id="run_risky")
    assert state.status == "waiting_for_approval" and state.stop_reason == "waiting_for_approval"
    assert [p.state for p in state.pending] == ["pending_approval"] and state.pending[0].call.id == "r"
    assert [r[0] for r in src.received] == ["get_order"] and REFUNDS == []  # the safe sibling ran, the refund not
    assert "issue_refund not run yet (waiting for approval)" in (state.report or "")

    forged = await store.load("run_risky")
    forged.pending[0].state = "approved"  # said by the state alone, not by a person: refused
    refused = await agent.resume(forged)
    assert (refused.status, refused.stop_reason, REFUNDS) == ("failed", "tampered", [])
    assert "no approval of it is on record" in (refused.report or "")

    store = await SqliteRunStore(tmp_path / "fresh.sqlite3").open()
    agent = Agent(turns(first, "refunded"), ToolBox([src]), store=store)
    await agent.run("refund A123", run_id="run_risky")
    await approvals.approve(store, "run_risky", "r")
    done = await agent.resume("run_risky")
    assert done.status == "done" and done.final_answer == "refunded"
    assert REFUNDS == [{"order_id": "A123", "amount_cents": 250000}] and done.pending == []
    assert [m.call_id for m in done.messages if m.role == "tool"] == ["o", "r"]  # the model's order
    with pytest.raises(ValueError, match="is done"):
        await agent.resume(done)  # an approval is used once
    await store.aclose()


async def test_rejected_or_changed_calls_are_answered_not_run() -> None:
    REFUNDS.clear()
    agent = Agent(turns([call("r", "issue_refund", order_id="A123", amount_cents=5)], "ok"), ToolBox([source()]))
    state = await agent.run("t")
    state.pending[0].state, state.pending[0].decision_reason = "rejected", "refunds over 0 need a manager"
    rejected = await agent.resume(state)
    assert rejected.steps[0].results[0].content == texts.rejected("refunds over 0 need a manager")

    state = await agent.run("t")
    state.pending[0].state = "approved"
    tampered = replace(state.pending[0].call, arguments={"order_id": "A123", "amount_cents": 999})
    state.pending[0].call = tampered
    resumed = await agent.resume(state)  # the pending copy no longer matches the call the model asked for
    assert (resumed.stop_reason, resumed.steps[0].results[0].error_kind, REFUNDS) == ("tampered", "blocked", [])


async def test_a_call_left_sent_by_a_crash_is_resent_only_if_idempotent() -> None:
    src = source()
    agent = Agent(
        turns(
            [call("g", "get_order", order_id="A123"), call("r", "issue_refund", order_id="A1", amount_cents=1)], "ok"
        ),
        ToolBox([src]),
    )
    state = await agent.run("t")
    calls = agent._calls()
    sent = [PendingCall.sending(c, calls.idempotent(c)) for c in state.steps[0].tool_calls]
    state.pending = sent  # as a crash mid-step leaves it
    src.received.clear()
    resumed = await agent.resume(state)
    got, lost = resumed.steps[0].results
    assert json.loads(got.content)["item"] == "keyboard" and lost.content == texts.outcome_unknown("issue_refund")
    assert [r[0] for r in src.received] == ["get_order"] and src.received[0][2] is not None  # with its key


async def test_wall_clock_limit_stops_the_whole_run() -> None:
    src = only(slow, timeout_s=60)
    state = await Agent.of(
        turns([call("s", "slow", seconds=60)], "never"), ToolBox([src]), limits=RunLimits(max_wall_s=0.5)
    ).run("t")
    assert (state.status, state.stop_reason) == ("stopped", "wall_clock")
    assert (state.report or "").startswith("stopped by the wall-clock limit of 0.5 s")


async def test_repeat_warn_tells_the_model_to_change_approach() -> None:
    state = await Agent.of(
        make_scripted("repeats"), ToolBox([source()]), limits=RunLimits(max_steps=4, on_repeat="warn")
    ).run("t")
    assert state.stop_reason == "step_limit"
    third = state.steps[2].results[0]
    assert third.error_kind == "blocked" and "Change your approach" in third.content


async def test_a_model_failure_stops_the_run_with_its_reason() -> None:
    class Down(ScriptedModel):
        async def complete(self, messages: list[Message], tools: list[ToolSpec]) -> ModelReply:
            raise ModelCallFailed("anthropic answered 529 overloaded 5 times; gave up", status=529)

    state = await Agent(Down(lambda m: AssistantMessage(text="x")), ToolBox([source()])).run("t")
    assert (state.status, state.stop_reason) == ("failed", "model_failed")
    assert "529 overloaded 5 times" in (state.report or "")


async def test_duplicate_names_across_sources_get_a_prefix() -> None:
    box = ToolBox([source(), only(get_order, name="other")])
    async with box:
        names = sorted(s.name for s in box.specs)
    assert "local__get_order" in names and "other__get_order" in names and "get_order" not in names


async def test_budget_from_real_usage_is_never_overspent() -> None:
    def seed_usage(n: int, messages: list[Message]) -> Usage:  # the seed's cost model: 1600 + 750*(n-1) in
        return Usage(input_tokens=1600 + 750 * (n - 1), output_tokens=150)

    model = ScriptedModel(make_scripted("wanders").script, usage_fn=seed_usage)
    state = await Agent.of(model, ToolBox([source()]), limits=RunLimits(max_steps=20, max_tokens=8000)).run("t")
    assert state.stop_reason == "token_budget" and state.usage.total_tokens <= 8000
    assert state.usage.input_tokens == sum(1600 + 750 * i for i in range(len(state.steps)))


async def test_cost_budget_with_a_price_function() -> None:
    def price(u: Usage) -> float:
        return (u.input_tokens * 3 + u.output_tokens * 15) / 1_000_000

    state = await Agent.of(
        make_scripted("wanders"), ToolBox([source()]), price_fn=price, limits=RunLimits(max_steps=50, max_cost_usd=0.01)
    ).run("t")
    assert state.stop_reason == "cost_budget" and state.cost_usd is not None and state.cost_usd <= 0.01


def test_a_misspelt_agent_option_is_refused_by_name() -> None:
    """Agent and Agent.of take AgentOptions as keywords: one misspelt is a TypeError naming it and the ones there are,
    not an option silently unset (a `stor=` would leave the run saved nowhere)."""
    for make in (Agent, Agent.of):
        with pytest.raises(TypeError, match=r"Agent\(\) got unexpected keyword arguments: stor \(it takes hooks, "):
            make(make_scripted("recovers"), ToolBox([source()]), stor=None)  # type: ignore[call-arg]


async def test_every_step_is_saved(tmp_path: Path) -> None:
    store = await SqliteRunStore(tmp_path / "runs.sqlite3").open()
    agent = Agent(make_scripted("recovers"), ToolBox([source()]), store=store)
    state = await agent.run("What does order A123 cost?", run_id="run_saved")
    loaded = await store.load("run_saved")
    assert loaded.final_answer == state.final_answer and len(loaded.steps) == 4
    assert loaded.version >= 4 and last_results(loaded.messages) == []
    await store.aclose()


async def test_a_run_is_on_record_before_its_first_model_call(tmp_path: Path) -> None:
    """So a process killed during the first model call leaves a run that `toolwire runs` shows and resume can take."""
    store = await SqliteRunStore(tmp_path / "runs.sqlite3").open()
    seen: list[str] = []

    class RecordCheckingModel:
        provider, model, server_address, server_port = "scripted", "checker", None, None

        async def complete(self, messages: list[Message], tools: list[ToolSpec]) -> ModelReply:
            saved = await store.load("run_early")
            seen.append(saved.status)
            return ModelReply(message=AssistantMessage(text="done"), usage=Usage(input_tokens=1, output_tokens=1))

        async def aclose(self) -> None:
            pass

    state = await Agent(RecordCheckingModel(), ToolBox([source()]), store=store).run("hi", run_id="run_early")
    assert seen == ["running"] and state.status == "done"
    assert (await store.load("run_early")).status == "done"
    await store.aclose()


class RunSeeingSource(ToolSource):
    """A ToolSource: the one tool `whoami`, which keeps what each request said of the run that called it."""

    name = "seeing"
    times_out_itself = True

    def __init__(self) -> None:
        self.seen: list[tuple[RunContext, int | None]] = []

    async def list_tools(self) -> list[ToolSpec]:
        return [ToolSpec(name="whoami", description="Says which run called it.", source=self.name)]

    async def call(self, request: ToolRequest) -> ToolResult:
        state = request.run.state
        self.seen.append((request.run, len(state.messages) if state is not None else None))
        return ToolResult(call_id=request.call.id, name=request.call.name, content=request.run.run_id)


async def test_a_source_gets_the_run_it_is_called_for_in_the_request() -> None:
    """The run's id and state come with the call (RunContext), not from a context variable: the loop hands over its
    own, and a ToolBox called outside any run hands over exactly the one it is given."""
    seeing = RunSeeingSource()
    agent = Agent(turns([call("w", "whoami")], "done"), ToolBox([seeing]))
    state = await agent.run("who called?", run_id="run_seen")
    [(run, messages_then)] = seeing.seen
    assert run.run_id == "run_seen" and run.state is state  # the run's own state, read while the call ran
    assert messages_then == 2 and state.steps[0].results[0].content == "run_seen"  # task and the model's turn
    assert run.children is not None and run.children.config is agent.config  # how a sub-agent of it would start

    async with ToolBox([seeing]) as box:
        other = RunContext("run_elsewhere")
        result = await box.call(call("x", "whoami"), other)
    assert seeing.seen[-1] == (other, None) and result.content == "run_elsewhere"
