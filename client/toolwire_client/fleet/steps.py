"""A fleet run's side effects as DBOS steps: each model call, each tool call and each run-store write is checkpointed
by DBOS as it happens, so a leg recovered on another worker replays what was done (the recorded outputs, in the
same order) and goes on from the first step that never finished, rather than asking the model again.

Wrappers of the run's own parts (its model, ToolBox and store), so the loop is the same loop: what makes a replay
replay is only that its inputs are the recorded outputs. Two rules keep the guarantees of the run store:
- A tool call whose step never finished, after the save that marked it `sent` was done by an earlier execution, may
  have reached its server: a non-idempotent one is answered "outcome unknown" and never sent again; an idempotent one
  is sent again with the same key (ToolBox derives it from the run and call ids). Either, when its server made it an
  MCP task whose id is saved in the run store, is followed (tasks/get) to its end instead, never sent again.
- The lease stays this execution's own (claim, renew and release are not steps: a replay must hold it again), and a
  save that the run store committed before its step was recorded is recognised as ours, not as someone else's."""

from datetime import datetime
from typing import Any

from dbos import DBOS

from toolwire_client import texts
from toolwire_client.models.base import Model, ModelCallFailed, ModelReply, WrappedModel
from toolwire_client.run.state import PendingCall, RunState
from toolwire_client.store import SqlRunStore, StaleRunState
from toolwire_client.store.approval_rules import Verdict
from toolwire_client.store.base import DecisionRecord, Ruling, RunSummary
from toolwire_client.tools.source import RunContext
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import Message, ToolCall
from toolwire_shared.results import ToolResult, failed
from toolwire_shared.tools import ToolSpec


class Leg:
    """What one execution of a leg knows about its replay: whether the last save was done by an earlier one."""

    def __init__(self) -> None:
        self.replayed_save = False
        self.replayed_steps = 0


class StepModel(WrappedModel):
    """The run's model, each call one DBOS step. A failed call is recorded as its reason (replayed as the same
    failure), not as a pickled exception."""

    def __init__(self, inner: Model, leg: Leg) -> None:
        super().__init__(inner)
        self.leg = leg

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None = None
    ) -> ModelReply:
        ran = False

        async def call() -> ModelReply | tuple[str, int | None]:
            nonlocal ran
            ran = True
            try:
                return await self.inner.complete(messages, tools, max_output_tokens)
            except ModelCallFailed as exc:
                return exc.reason, exc.status

        out = await DBOS.run_step_async({"name": "model-call"}, call)
        self.leg.replayed_steps += not ran
        if isinstance(out, tuple):
            raise ModelCallFailed(out[0], status=out[1])
        return out


class StepToolBox(ToolBox):
    """The run's ToolBox (same sources, routes and limits), each call one DBOS step named by its call id, so a replay
    that met the calls in another order fails loudly instead of handing one call another's result."""

    def __init__(self, box: ToolBox, leg: Leg, store: SqlRunStore) -> None:
        self.__dict__.update(box.__dict__)
        self.leg, self.store = leg, store

    async def call(self, call: ToolCall, run: RunContext, timeout_s: float | None = None) -> ToolResult:
        ran = False

        async def send() -> ToolResult:
            nonlocal ran
            ran = True
            spec = self.spec(call.name)
            idempotent = spec is not None and spec.policy.idempotent
            if self.leg.replayed_save and not await self._follows_saved_task(call, run) and not idempotent:
                return failed(call.id, call.name, "outcome_unknown", texts.outcome_unknown(call.name))
            return await ToolBox.call(self, call, run, timeout_s=timeout_s)

        result = await DBOS.run_step_async({"name": f"tool-call {call.id}"}, send)
        self.leg.replayed_steps += not ran
        return result

    async def _follows_saved_task(self, call: ToolCall, run: RunContext) -> bool:
        """Whether the earlier execution's send of `call` became an MCP task whose id it saved (inside the call's
        step, so no step recorded that save): then this one follows the same task (tools/tasks.py) and never sends
        the call again. The replayed state gets the task id, and the store's version when that save is all the store
        holds beyond it, so the leg's next save is not taken for someone else's."""
        state = run.state
        if state is None:
            return False
        stored = await self.store.load(run.run_id)
        task_id = next((p.task_id for p in stored.pending if p.call.id == call.id and p.task_id), None)
        if task_id is None:
            return False
        for p in state.pending:
            if p.call.id == call.id:
                p.task_id = task_id
        if stored.version > state.version and _content(stored) == _content(state):
            state.version, state.updated_at = stored.version, stored.updated_at
        return True


class StepStore:
    """Implements RunStore over `inner`: the writes and approval checks a run makes while it is driven are steps; the
    lease (claim, renew, release) and plain reads are not."""

    def __init__(self, inner: SqlRunStore, leg: Leg) -> None:
        self.inner, self.leg = inner, leg

    async def save(self, state: RunState, owner: str | None = None) -> None:
        ran = False

        async def write() -> tuple[int, datetime]:
            nonlocal ran
            ran = True
            try:
                await self.inner.save(state, owner)
            except StaleRunState:
                if not await self._committed_before(state):
                    raise
            return state.version, state.updated_at

        state.version, state.updated_at = await DBOS.run_step_async({"name": "save"}, write)
        self.leg.replayed_save = not ran
        self.leg.replayed_steps += not ran

    async def save_end(self, state: RunState, owner: str | None = None) -> None:
        async def write() -> tuple[int, datetime]:
            await self.inner.save_end(state, owner)
            return state.version, state.updated_at

        state.version, state.updated_at = await DBOS.run_step_async({"name": "save-end"}, write)

    async def _committed_before(self, state: RunState) -> bool:
        """The store holds exactly this save already: an earlier execution committed it and died before DBOS
        recorded the step. Then the step's outcome is that save."""
        stored = await self.inner.load(state.run_id)
        if stored.version != state.version + 1 or _content(stored) != _content(state):
            return False
        state.version, state.updated_at = stored.version, stored.updated_at
        return True

    async def authorize(self, run_id: str, call: ToolCall, idempotent: bool) -> Verdict:
        async def check() -> Verdict:
            return await self.inner.authorize(run_id, call, idempotent)

        return await DBOS.run_step_async({"name": f"authorize {call.id}"}, check)

    async def flag_tampered(self, run_id: str, call: ToolCall, why: str) -> None:
        async def flag() -> None:
            await self.inner.flag_tampered(run_id, call, why)

        await DBOS.run_step_async({"name": f"flag-tampered {call.id}"}, flag)

    # this execution's own, never replayed: reads, a person's decisions and the lease
    async def decide(self, run_id: str, call_id: str, ruling: Ruling) -> PendingCall:
        return await self.inner.decide(run_id, call_id, ruling)

    async def decisions(self, run_id: str | None = None, limit: int = 200) -> list[DecisionRecord]:
        return await self.inner.decisions(run_id, limit)

    async def waiting(self, limit: int = 200) -> list[RunState]:
        return await self.inner.waiting(limit)

    async def tampered(self, limit: int = 200) -> list[tuple[str, str, str, str | None, Any]]:
        return await self.inner.tampered(limit)

    async def schema_version(self) -> int:
        return await self.inner.schema_version()

    async def load(self, run_id: str) -> RunState:
        return await self.inner.load(run_id)

    async def list_runs(self, limit: int = 50) -> list[RunSummary]:
        return await self.inner.list_runs(limit)

    async def claim(self, run_id: str, owner: str) -> None:
        await self.inner.claim(run_id, owner)

    async def renew(self, run_id: str, owner: str) -> bool:
        return await self.inner.renew(run_id, owner)

    async def release(self, run_id: str, owner: str) -> None:
        await self.inner.release(run_id, owner)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _content(state: RunState) -> tuple[object, ...]:
    """What a replay rebuilds exactly (timestamps it does not: they are stamped again)."""
    pending = [(p.call.id, p.state) for p in state.pending]
    return state.status, state.messages, pending, len(state.steps), [len(s.results) for s in state.steps]
