"""The loop's invariants hold whichever exit ends a step: the saved message list is always a valid request, the
wall-clock exit is decided by its own deadline only, and the repeat guard counts from the run state alone."""

from dataclasses import replace
from typing import Any

import anyio
import pytest

from toolwire_client import texts
from toolwire_client.config import RunLimits
from toolwire_client.loop import Agent
from toolwire_client.models.base import ModelReply
from toolwire_client.models.providers import make_scripted
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.run.ordering import check_order
from toolwire_client.run.state import RunState, asked_key
from toolwire_client.tools.registry_source import RegistrySource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_server import Registry
from toolwire_shared.messages import AssistantMessage, Message, ToolCall, UserMessage
from toolwire_shared.tools import ToolSpec


def tools() -> tuple[ToolBox, dict[str, anyio.Event]]:
    """`quick` answers at once; `stuck` waits forever once `quick` has answered (so the run is mid-turn)."""
    answered = {"quick": anyio.Event()}
    registry = Registry("local")

    async def quick() -> str:
        """Answers at once."""
        answered["quick"].set()
        return "quick answer"

    async def stuck() -> str:
        """Never answers."""
        await answered["quick"].wait()
        await anyio.sleep_forever()
        return "never"

    registry.add(quick)
    registry.add(stuck, timeout_s=600)
    return ToolBox([RegistrySource(registry)]), answered


def both_then_done(messages: list[Message]) -> AssistantMessage:
    if any(isinstance(m, AssistantMessage) for m in messages):
        return AssistantMessage(text="done")
    return AssistantMessage(tool_calls=[ToolCall(id="q", name="quick"), ToolCall(id="s", name="stuck")])


async def test_a_wall_clock_stop_mid_turn_leaves_a_valid_request_and_keeps_what_came_back() -> None:
    box, answered = tools()
    agent = Agent.of(ScriptedModel(both_then_done), box, limits=RunLimits(max_wall_s=2))
    state = await agent.run("t")
    assert answered["quick"].is_set()
    assert (state.status, state.stop_reason) == ("stopped", "wall_clock")
    check_order(state.messages)  # every call of the last turn is answered, in the model's order
    quick, stuck = state.steps[-1].results
    assert (quick.content, quick.error_kind) == ("quick answer", None)
    assert (stuck.content, stuck.error_kind) == (texts.outcome_unknown("stuck"), "outcome_unknown")
    assert state.pending == []


async def test_a_repeated_call_stop_answers_every_call_of_its_turn() -> None:
    box, _ = tools()
    state = await Agent.of(make_scripted("repeats"), box, limits=RunLimits(max_steps=6)).run("t")
    assert state.stop_reason == "repeated_call"
    check_order(state.messages)
    last = state.steps[-1]
    assert [r.error_kind for r in last.results] == ["blocked"] * len(last.tool_calls)
    assert all(r.content.startswith("ERROR: not run: stopped by a repeated call") for r in last.results)


class TimesOutInside(ScriptedModel):
    async def complete(self, messages: list[Message], tools: list[ToolSpec]) -> ModelReply:
        raise TimeoutError("a library's own timeout, not the run's")


async def test_a_timeout_error_from_elsewhere_is_not_the_wall_clock_exit() -> None:
    box, _ = tools()
    for limit in (None, 60.0):
        agent = Agent.of(TimesOutInside(both_then_done), box, limits=RunLimits(max_wall_s=limit))
        with pytest.raises(TimeoutError, match="a library's own timeout"):
            await agent.run("t")


async def test_the_repeat_guard_counts_from_the_run_state_alone() -> None:
    """Two agents resuming the same saved list see the same counts; nothing is remembered between runs."""
    same = ToolCall(id="x", name="quick")
    history: list[Any] = [UserMessage(content="t")]
    for n in range(2):
        history.append(AssistantMessage(tool_calls=[replace(same, id=f"x{n}")]))
    state = RunState(run_id="r", agent_name="a", task="t", model="m", messages=history)
    assert state.asked_before(len(history))[asked_key(same)] == 2
    fresh = RunState.model_validate_json(state.model_dump_json())
    assert fresh.asked_before(len(history))[asked_key(same)] == 2
    assert fresh.asked_before(2)[asked_key(same)] == 1  # a shorter view counts afresh
    other = ToolCall(id="y", name="slow")
    fresh.messages = [
        UserMessage(content="t"),
        *(AssistantMessage(tool_calls=[replace(other, id=f"y{n}")]) for n in range(3)),
    ]
    counts = fresh.asked_before(3)  # a list put in place of the one counted: counted afresh, not added to
    assert (counts[asked_key(same)], counts[asked_key(other)]) == (0, 2)
    fresh.messages[2] = AssistantMessage(tool_calls=[replace(same, id="x9")])  # edited where it was counted up to
    counts = fresh.asked_before(4)
    assert (counts[asked_key(same)], counts[asked_key(other)]) == (1, 2)
