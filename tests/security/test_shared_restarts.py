"""Hole 8: one run whose calls keep killing a shared stdio server must not take it from the other runs of the
process. The run in flight at each drop is refused after a few drops in a row and reads why; the runs that hold the
same connection meanwhile, and the ones that come after, go on on the restarted server."""

import json
import sys
from pathlib import Path
from typing import Any

import anyio

from toolwire_client.assembly.sources import build_sources
from toolwire_client.config import RunLimits, ServerSpec
from toolwire_client.loop import Agent
from toolwire_client.models.base import ModelReply
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.run.state import RunState
from toolwire_client.tools.shared_connections import DEFAULT_MAX_RESTARTS, SharedConnections
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import AssistantMessage, Message, ToolCall, ToolResultMessage
from toolwire_shared.tools import ToolSpec

REPO = Path(__file__).resolve().parents[2]
SERVER = ServerSpec(name="crashy", command=[sys.executable, "tests/security/crash_server.py"], cwd=str(REPO))
CRASHES = DEFAULT_MAX_RESTARTS + 2
"""More crash calls than the old per-pool restart limit: on the old code the connection was dead after them."""
STRIKES = 3
"""SharedConnections' default: drops in a row a run may be in flight at."""


def calls(tool: str, turns: int) -> ScriptedModel:
    """Calls `tool` once per turn (a new argument each time, so no repeat guard), `turns` turns, then answers."""

    def script(messages: list[Message]) -> AssistantMessage:
        done = sum(isinstance(m, AssistantMessage) for m in messages)
        if done < turns:
            return AssistantMessage(tool_calls=[ToolCall(id=f"{tool}{done}", name=tool, arguments={"turn": done})])
        return AssistantMessage(text="done")

    return ScriptedModel(script)


class Held(ScriptedModel):
    """`calls("echo", turns)`, waiting before its second turn until `go` is set: the run holds its lease on the
    shared connection, between two calls, while another run kills the server."""

    def __init__(self, turns: int) -> None:
        super().__init__(calls("echo", turns).script)
        self.waiting, self.go = anyio.Event(), anyio.Event()

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None = None
    ) -> ModelReply:
        if self.calls == 1:
            self.waiting.set()
            await self.go.wait()
        return await super().complete(messages, tools, max_output_tokens)


async def run(model: ScriptedModel) -> tuple[RunState, list[ToolResultMessage]]:
    limits = RunLimits(max_steps=CRASHES + 2)
    state = await Agent.of(model, ToolBox(build_sources([SERVER])), limits=limits).run("Go")
    return state, [m for m in state.messages if isinstance(m, ToolResultMessage)]


def pids(results: list[ToolResultMessage]) -> list[Any]:
    assert not [r.content for r in results if r.is_error], [r.content for r in results]
    return [json.loads(r.content)["pid"] for r in results]


async def test_a_run_that_keeps_killing_a_shared_server_is_refused_and_the_others_go_on() -> None:
    with anyio.fail_after(90):
        async with SharedConnections() as pool:
            held = [Held(3), Held(3)]
            done: list[tuple[RunState, list[ToolResultMessage]]] = []

            async def hold(model: Held) -> None:
                done.append(await run(model))

            async with anyio.create_task_group() as tg:
                for model in held:
                    tg.start_soon(hold, model)
                for model in held:
                    await model.waiting.wait()
                crasher, crashed = await run(calls("crash", CRASHES))
                for model in held:
                    model.go.set()
            after = [await run(calls("echo", 2)) for _ in range(2)]
            assert pool.connections == 1

    assert crasher.status == "done" and len(crashed) == CRASHES and all(r.is_error for r in crashed)
    refused = [r.content for r in crashed if "gets no more restarts" in r.content]
    assert len(refused) == CRASHES - STRIKES, [r.content for r in crashed]
    assert "stopped 3 times in a row while this run had a call in flight" in refused[0]
    for state, results in [*done, *after]:
        assert state.status == "done" and len(pids(results)) == len(results) > 0
    first, last = pids(done[0][1])[0], pids(after[-1][1])[-1]
    assert first != last  # the held runs started on the first server and the later runs used a restarted one
    assert len({pid for _, results in [*done, *after] for pid in pids(results)[1:]}) == 1  # and only one more


def test_the_restart_window_slides_backs_off_and_forgives_an_unlucky_run() -> None:
    from toolwire_shared.mcp_kit.restarts import SlidingWindow as RestartWindow

    window = RestartWindow(max_restarts=3, window_s=60.0, backoff_s=0.1, strikes=2)
    assert window.delay(0.0) == (0.0, False)
    for at in (0.0, 1.0, 2.0):
        window.restarted(at)
    assert window.delay(2.0) == (58.0, True)  # full: the next restart waits for the oldest to leave the window
    assert window.delay(60.0) == (0.2, False)  # it left: the connection recovers by itself, backed off
    assert window.crashed(["culprit", "bystander"]) == []
    window.answered("bystander")  # the bystander's next call came back: its strike was bad luck
    assert window.crashed(["culprit", "bystander"]) == ["culprit"]
    assert window.refusal("bystander", "s") is None and "gets no more restarts" in str(window.refusal("culprit", "s"))
