"""SharedConnections: runs in one process that use the same stdio tool server share one server process, each call
still carries its own run id, idempotency key and trace context in `_meta`, and a connection that drops is made
again without failing the runs that use it."""

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio

from helpers import telemetry
from helpers.polling import await_until
from helpers.replicas import asks_whoami
from toolwire_client.assembly.sources import build_sources
from toolwire_client.config import ServerSpec
from toolwire_client.loop import Agent
from toolwire_client.models.base import ModelReply
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.run.state import RunState
from toolwire_client.tools.shared_connections import SharedConnections
from toolwire_client.tools.toolbox import ToolBox, idempotency_key
from toolwire_shared.messages import Message, ToolResultMessage
from toolwire_shared.tools import IDEMPOTENCY_KEY_META, RUN_ID_META, ToolSpec

REPO = Path(__file__).resolve().parents[2]
SERVER = ServerSpec(name="meta", command=[sys.executable, "tests/loop/meta_server.py"], cwd=str(REPO))


async def run(model: ScriptedModel) -> tuple[RunState, list[dict[str, Any]]]:
    """One agent run on SERVER (through build_sources, where the pool hands out leases); its answers, parsed."""
    state = await Agent(model, ToolBox(build_sources([SERVER]))).run("Who answers?")
    results = [m for m in state.messages if isinstance(m, ToolResultMessage)]
    assert state.status == "done" and not [m.content for m in results if m.is_error], state.messages
    return state, [json.loads(m.content) for m in results]


async def runs_at_once(count: int, turns: int) -> list[tuple[RunState, list[dict[str, Any]]]]:
    done: list[tuple[RunState, list[dict[str, Any]]]] = []

    async def one() -> None:
        done.append(await run(asks_whoami(turns)))

    async with anyio.create_task_group() as tg:
        for _ in range(count):
            tg.start_soon(one)
    return done


async def test_runs_share_one_server_and_each_call_says_whose_it_is() -> None:
    telemetry.install()  # a tracer provider, so calls carry a traceparent
    async with SharedConnections() as pool:
        runs = await runs_at_once(3, turns=3)
        assert pool.connections == 1
    assert len({answer["pid"] for _, answers in runs for answer in answers}) == 1  # one server process for all
    traces = set()
    for state, answers in runs:
        for answer in answers:
            meta, call_id = answer["meta"], f"who{answer['turn']}"
            assert meta[RUN_ID_META] == state.run_id
            assert meta[IDEMPOTENCY_KEY_META] == idempotency_key(state.run_id, call_id)
        run_traces = {answer["meta"]["traceparent"].split("-")[1] for answer in answers}
        assert len(run_traces) == 1  # every call of a run in the run's own trace
        traces |= run_traces
    assert len(traces) == 3  # and no run in another's


async def test_without_a_pool_each_run_starts_its_own_server() -> None:
    runs = await runs_at_once(2, turns=1)
    assert len({answers[0]["pid"] for _, answers in runs}) == 2


class Paused(ScriptedModel):
    """asks_whoami's script, waiting before its second turn until `go` is set (`waiting` says it got there, and
    `pid` is the server that answered its first call)."""

    def __init__(self, turns: int) -> None:
        super().__init__(asks_whoami(turns).script)
        self.waiting, self.go = anyio.Event(), anyio.Event()
        self.pid = 0

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None = None
    ) -> ModelReply:
        if self.calls == 1:
            answer = next(m for m in messages if isinstance(m, ToolResultMessage))
            self.pid = json.loads(answer.content)["pid"]
            self.waiting.set()
            await self.go.wait()
        return await super().complete(messages, tools, max_output_tokens)


async def test_a_dropped_shared_connection_is_made_again_and_no_run_fails() -> None:
    async with SharedConnections() as pool:
        first, second = Paused(3), Paused(3)
        runs: list[tuple[RunState, list[dict[str, Any]]]] = []

        async def one(model: ScriptedModel) -> None:
            runs.append(await run(model))

        async with anyio.create_task_group() as tg:
            tg.start_soon(one, first)
            tg.start_soon(one, second)
            await first.waiting.wait()
            await second.waiting.wait()
            assert first.pid == second.pid
            os.kill(first.pid, signal.SIGKILL)  # the shared server, while both runs are between two calls
            first.go.set()
            second.go.set()
        assert pool.connections == 1
    for _, answers in runs:
        before, after = answers[0]["pid"], answers[-1]["pid"]
        assert before != after  # the first call on the old server, the last on the new one
    assert len({answers[-1]["pid"] for _, answers in runs}) == 1  # one new server for both


async def test_a_connection_no_run_leases_is_closed_and_opened_again_when_asked() -> None:
    async with SharedConnections(idle_close_s=0.2) as pool:
        (_, first), *_ = await runs_at_once(1, turns=1)
        await await_until(lambda: pool.connections == 0, "the idle shared connection to close", timeout_s=10)
        (_, again), *_ = await runs_at_once(1, turns=1)
        assert again[0]["pid"] != first[0]["pid"]  # a new server for the new lease
        assert pool.connections == 1


async def test_stdio_false_shares_http_only() -> None:
    async with SharedConnections(stdio=False) as pool:
        runs = await runs_at_once(2, turns=1)
        assert pool.connections == 0
    assert len({answers[0]["pid"] for _, answers in runs}) == 2  # each run its own stdio server, as without a pool


async def test_a_run_that_starts_on_a_dropped_shared_connection_lists_its_tools_on_the_new_one() -> None:
    """The server dies while a run holds the connection between two calls; a run that starts then meets the drop
    in its tools/list (a read, so asked again), not in a call: it starts on the new server, as the held run goes on."""
    async with SharedConnections() as pool:
        holder = Paused(2)
        held: list[tuple[RunState, list[dict[str, Any]]]] = []

        async def hold() -> None:
            held.append(await run(holder))

        async with anyio.create_task_group() as tg:
            tg.start_soon(hold)
            await holder.waiting.wait()
            os.kill(holder.pid, signal.SIGKILL)
            [(_, answers)] = await runs_at_once(1, turns=1)
            holder.go.set()
        assert pool.connections == 1
    assert answers[0]["pid"] != holder.pid  # the starting run's first call went to the new server
    assert held[0][1][-1]["pid"] == answers[0]["pid"]
