"""One AG-UI run over SSE: RUN_STARTED, the run's state, then the events of every record of the run not sent yet
(mapping.py), framed by their step, read from the store every POLL_S (it has no change feed) until the run ends
(RUN_FINISHED, or RUN_ERROR) or waits for a person (RUN_FINISHED with the interrupts). What a poll sends is decided
from the state that poll read, end included, so nothing the store holds is left out before the last event."""

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import anyio
from ag_ui.core import (
    BaseEvent,
    Interrupt,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
)
from ag_ui.encoder import EventEncoder

from toolwire_client.agui.mapping import Part, delta, interrupt, parts, step_name, summary
from toolwire_client.run.state import RunState
from toolwire_client.store import RunNotFound, SqlRunStore

POLL_S = 0.2
KEEPALIVE_EVERY = 75
"""Polls between two keep-alive comments when nothing changed (about 15 s: under common proxies' idle timeouts)."""
PROTOCOL_VERSION = "1.0"


@dataclass
class Leg:
    """One AG-UI run of a toolwire run: its ids, and the keys of the records the front end has already."""

    input: RunAgentInput
    run_id: str
    sent: set[str] = field(default_factory=set)


Trouble = Callable[[str], str | None]
"""Why the run could not start or go on in this process (Driver.trouble), or None."""


async def events(store: SqlRunStore, leg: Leg, trouble: Trouble) -> AsyncIterator[str]:
    encode = EventEncoder().encode
    ids = {"thread_id": leg.input.thread_id, "run_id": leg.input.run_id}
    yield encode(RunStartedEvent(**ids, protocol_version=PROTOCOL_VERSION))
    shown: dict[str, object] | None = None
    quiet = 0
    while True:
        state = await _load(store, leg.run_id)
        if state is not None:
            now = summary(state)
            news = _news(state, leg.sent)
            if shown is None:
                news.insert(0, StateSnapshotEvent(snapshot=now))
            elif shown != now:
                news.append(StateDeltaEvent(delta=delta(shown, now)))
            shown = now
            end = await _end(store, state, ids)
            for event in [*news, *([end] if end else [])]:
                yield encode(event)
            if end is not None:
                return
            quiet = 0 if news else quiet + 1
        if (said := trouble(leg.run_id)) is not None:
            yield encode(RunErrorEvent(message=said, code="not_driven"))
            return
        if quiet and quiet % KEEPALIVE_EVERY == 0:
            yield ": still here\n\n"
        await anyio.sleep(POLL_S)


async def _load(store: SqlRunStore, run_id: str) -> RunState | None:
    """The run as saved now; None before its first save (a run this process is starting)."""
    try:
        return await store.load(run_id)
    except RunNotFound:
        return None


def _news(state: RunState, sent: set[str]) -> list[BaseEvent]:
    """The events of the records not sent yet, each step's between its STEP_STARTED and STEP_FINISHED."""
    fresh: dict[int, list[Part]] = {}
    for part in parts(state):
        if part.key not in sent:
            sent.add(part.key)
            fresh.setdefault(part.step, []).append(part)
    names = {step.index: step_name(step) for step in state.steps}
    out: list[BaseEvent] = []
    for index, found in fresh.items():
        out.append(StepStartedEvent(step_name=names[index]))
        out += [event for part in found for event in part.events]
        out.append(StepFinishedEvent(step_name=names[index]))
    return out


async def _end(store: SqlRunStore, state: RunState, ids: dict[str, str]) -> BaseEvent | None:
    """The last event when the run ended or waits for a person; None while it runs (or, decided, is about to go
    on again)."""
    if state.status in ("done", "stopped"):
        result = {"status": state.status, "answer": state.final_answer, "stopReason": state.stop_reason}
        return RunFinishedEvent(**ids, result=result, outcome=RunFinishedSuccessOutcome())
    if state.status == "failed":
        return RunErrorEvent(message=state.stop_reason or state.report or "the run failed", code="failed")
    if state.status != "waiting_for_approval":
        return None
    waiting = await _interrupts(store, state, own=True)
    return RunFinishedEvent(**ids, outcome=RunFinishedInterruptOutcome(interrupts=waiting)) if waiting else None


async def _interrupts(store: SqlRunStore, state: RunState, *, own: bool) -> list[Interrupt]:
    """The calls waiting for a person: the run's own, and those of the sub-agents its delegate calls wait on."""
    found = [interrupt(state.run_id, p, own=own) for p in state.pending if p.waits_for_person]
    for child in [c for p in state.pending if (c := p.waiting_child)]:
        found += await _interrupts(store, await store.load(child), own=False)
    return found
