"""The loop's side of code mode (tools/code_mode/): a script's run driven under this process's lease on it, each
batch of its tool calls a turn of that run through the same pipeline as a model's turn (calls.py: hooks, approval,
authorisation from the store's record, pending calls saved `sent` before they are sent, concurrency), and its end
recorded as any run's is (run/exits.py)."""

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from toolwire_client.calls import TurnCalls, answer_the_rest, append_results
from toolwire_client.run import exits
from toolwire_client.run.state import RunState, StepRecord, now
from toolwire_client.store import checkpoint
from toolwire_client.store.base import RunStore
from toolwire_client.store.lease import Lease, held

OnStep = Callable[[RunState, StepRecord], None]
SCRIPT_REPEATS = 1_000_000
"""A script may ask for the same call again (a poll, a re-read): the repeat guard is the model's, not a script's."""


class ScriptTurnsOfRun:
    """Implements ScriptTurns for one script's run: TurnCalls on the parent's parts, saving the script's run."""

    def __init__(self, state: RunState, calls: TurnCalls, on_step: OnStep | None = None) -> None:
        self.state, self.calls, self.on_step = state, calls, on_step

    async def act(self, step: StepRecord) -> None:
        await self.calls.act(self.state, step)
        append_results(self.state, step)
        step.finished_at = now()
        await self.calls.save(self.state)
        self._ended(step)

    async def settle(self) -> None:
        await self.calls.settle(self.state)
        self._ended(self.state.steps[-1])

    def _ended(self, step: StepRecord) -> None:
        if self.on_step is not None:  # the parent's live step table (`toolwire run`) shows the script's rows too
            self.on_step(self.state, step)


@asynccontextmanager
async def script_driven(
    state: RunState,
    parent_calls: TurnCalls,
    store: RunStore | None,
    leases: dict[str, Lease],
    on_step: OnStep | None = None,
) -> AsyncIterator[ScriptTurnsOfRun]:
    """`state` driven here: its lease held, its calls on `parent_calls`' parts, and whatever exit ends the script
    recorded (status, report; the calls of a batch it stopped in answered unless it waits for a person) and saved."""
    async with held(store, state, leases) as lease:

        async def save(script: RunState) -> None:
            await checkpoint.save(store, script, lease)

        limits = parent_calls.limits.model_copy(update={"repeat_limit": SCRIPT_REPEATS, "on_repeat": "warn"})
        p = parent_calls
        calls = TurnCalls(p.toolbox, store, p.hooks, limits, p.why_risky, save, p.children, p.on_elicit, p.lent)
        try:
            yield ScriptTurnsOfRun(state, calls, on_step)
        except exits.RunExit as exit_:
            if state.steps and not isinstance(exit_, exits.WaitingForApproval):
                answer_the_rest(state, state.steps[-1], exit_.why)
            exits.finish(state, exit_)
        if lease is None or lease.lost is None:
            await checkpoint.save_last(store, state, lease)
