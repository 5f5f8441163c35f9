"""One AG-UI run over SSE: RUN_STARTED, the run's state, then the events of every record of the run not sent yet
(mapping.py) and of the child runs its calls started (subagents.py), framed by their step, read from the store every
POLL_S (it has no change feed) until the run ends (RUN_FINISHED, or RUN_ERROR) or waits for a person (RUN_FINISHED
with the interrupts, its own and its sub-agents'). What a poll sends is decided from the state that poll read, end
included, so nothing the store holds is left out before the last event."""

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

from toolwire_client.agui.mapping import Sub, delta, interrupt, summary
from toolwire_client.agui.subagents import Reader, Tree, closing, opening
from toolwire_client.run.state import RunState
from toolwire_client.store import RunNotFound, SqlRunStore

POLL_S = 0.2
KEEPALIVE_EVERY = 75
"""Polls between two keep-alive comments when nothing changed (about 15 s: under common proxies' idle timeouts)."""
PROTOCOL_VERSION = "1.0"


@dataclass
class Leg:
    """One AG-UI run of a toolwire run: its ids, the keys of the records the front end has already, and the
    sub-agents started in it."""

    input: RunAgentInput
    run_id: str
    sees: Callable[[str], bool]
    """Whether the person may see an agent's runs (people.Person.sees): the sub-agents streamed."""
    sent: set[str] = field(default_factory=set)
    open: dict[str, Sub] = field(default_factory=dict)
    """Sub-agents started in this AG-UI run and not ended yet, by run id."""
    seen: set[str] = field(default_factory=set)
    """Sub-agents started in this AG-UI run, ended or not."""


Trouble = Callable[[str], str | None]
"""Why the run could not start or go on in this process (Driver.trouble), or None."""


async def events(store: SqlRunStore, leg: Leg, trouble: Trouble) -> AsyncIterator[str]:
    encode = EventEncoder().encode
    ids = {"thread_id": leg.input.thread_id, "run_id": leg.input.run_id}
    yield encode(RunStartedEvent(**ids, protocol_version=PROTOCOL_VERSION))
    shown: dict[str, object] | None = None
    reader = Reader(store, leg.sees)
    quiet = 0
    while True:
        state = await _load(store, leg.run_id)
        if state is not None:
            tree = await reader.read(state)
            now = summary(state)
            news = _news(tree, leg)
            if shown is None:
                news.insert(0, StateSnapshotEvent(snapshot=now))
            elif shown != now:
                news.append(StateDeltaEvent(delta=delta(shown, now)))
            shown = now
            end = await _end(store, tree, state, leg, ids)
            for event in [*news, *end]:
                yield encode(event)
            if end:
                return
            quiet = 0 if news else quiet + 1
        if (said := trouble(leg.run_id)) is not None:
            yield encode(RunErrorEvent(message=said, code="not_driven"))
            return
        if quiet and quiet % KEEPALIVE_EVERY == 0:
            yield ": still here\n\n"
        await anyio.sleep(POLL_S)


async def sent_before(store: SqlRunStore, state: RunState, sees: Callable[[str], bool]) -> set[str]:
    """The keys of every record of the thread as `state` stands, its sub-agents' too: what a front end that saw
    the stream up to this state has."""
    return {part.key for part in (await Reader(store, sees).read(state)).parts}


async def _load(store: SqlRunStore, run_id: str) -> RunState | None:
    """The run as saved now; None before its first save (a run this process is starting)."""
    try:
        return await store.load(run_id)
    except RunNotFound:
        return None


def _news(tree: Tree, leg: Leg) -> list[BaseEvent]:
    """The events of the records not sent yet, in the thread's order: each step's between its STEP_STARTED and
    STEP_FINISHED, a sub-agent's after its SUBAGENT_STARTED (once per AG-UI run, before its first event there)."""
    out: list[BaseEvent] = []
    frame: tuple[str, Sub | None] | None = None
    for part in tree.parts:
        if part.key in leg.sent:
            continue
        leg.sent.add(part.key)
        sub = part.sub
        here = (part.step, sub) if part.step is not None else None
        if frame is not None and here != frame:
            out.append(StepFinishedEvent(step_name=frame[0], **_by(frame[1])))
            frame = None
        if sub is not None and sub.run_id not in leg.open:
            out += opening(sub, leg.open, leg.seen)
        if here is not None and frame is None:
            out.append(StepStartedEvent(step_name=here[0], **_by(sub)))
            frame = here
        out += part.events
        if part.ends and sub is not None:
            del leg.open[sub.run_id]
    if frame is not None:
        out.append(StepFinishedEvent(step_name=frame[0], **_by(frame[1])))
    return out


def _by(sub: Sub | None) -> dict[str, str]:
    return {"subagent_run_id": sub.run_id} if sub is not None else {}


async def _end(store: SqlRunStore, tree: Tree, state: RunState, leg: Leg, ids: dict[str, str]) -> list[BaseEvent]:
    """The last events when the run ended or waits for a person (the sub-agents still open ended first); none
    while it runs (or, decided, is about to go on again)."""
    if state.status in ("done", "stopped"):
        result = {"status": state.status, "answer": state.final_answer, "stopReason": state.stop_reason}
        finished = RunFinishedEvent(**ids, result=result, outcome=RunFinishedSuccessOutcome())
        return [*closing(leg.open, tree, {}), finished]
    if state.status == "failed":
        said = state.report or state.stop_reason or "the run failed"  # for people; the stop reason is the code
        return [RunErrorEvent(message=said, code=state.stop_reason or "failed")]
    if state.status != "waiting_for_approval":
        return []
    waiting = await _interrupts(store, tree, state, None)
    if not waiting:
        return []
    own: dict[str, list[str]] = {}
    for asked in waiting:
        if asked.subagent_run_id is not None:
            own.setdefault(asked.subagent_run_id, []).append(asked.id)
    paused = RunFinishedEvent(**ids, outcome=RunFinishedInterruptOutcome(interrupts=waiting))
    return [*closing(leg.open, tree, own), paused]


async def _interrupts(
    store: SqlRunStore, tree: Tree, state: RunState, sub: Sub | None, hidden: bool = False
) -> list[Interrupt]:
    """The calls waiting for a person: the run's own, and those of the sub-agents its calls wait on. A sub-agent
    the person may not see (`hidden`: not streamed) is read here; its interrupts name no tool call."""
    found = [interrupt(state.run_id, p, sub, hidden=hidden) for p in state.pending if p.waits_for_person]
    for child in [c for p in state.pending if (c := p.waiting_child)]:
        if not hidden and child in tree.runs:
            found += await _interrupts(store, tree, tree.runs[child], tree.subs[child])
        else:
            found += await _interrupts(store, tree, await store.load(child), None, hidden=True)
    return found
