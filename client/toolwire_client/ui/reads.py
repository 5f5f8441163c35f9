"""What the console's pages read from the run store: the runs list (as a tree, filtered, with whom each waits
for), one run with its sub-agents and recorded decisions, and the calls waiting for a person; each only as far as
the person logged in may see it (people.Person: runs of their agents, calls of their tools to decide). A run they
may not see reads as no such run."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, get_args

from toolwire_client.run.state import PendingCall, RunState, RunStatus
from toolwire_client.store import RunNotFound, RunSummary, SqlRunStore
from toolwire_client.store.answers import recent_answers, waiting_for_input
from toolwire_client.store.base import DecisionRecord
from toolwire_client.store.events import LateOutcome, late_recorded
from toolwire_client.store.sql import Tx
from toolwire_client.store.text_codec import unescape
from toolwire_client.store.tree import as_tree, load_tree
from toolwire_client.ui.people import EVERYONE, Person

T = TypeVar("T")
STATUSES: tuple[str, ...] = get_args(RunStatus)
LISTED = 200
"""The newest runs the list shows (a filter narrows them)."""


@dataclass(frozen=True)
class RunRow:
    depth: int
    run: RunSummary
    waits_for: str
    """Whom the run waits for, or who drives it: 'a person: issue_refund', 'a person: book_table asks a question',
    'sub-agent R', 'driven by H-P-X'."""


def waits_for(state: RunState) -> str:
    """Whom a run that waits waits for: the calls a person must decide, and the sub-agents it waits on."""
    people = [p.call.name for p in state.pending if p.waits_for_approval]
    people += [f"{p.call.name} asks a question" for p in state.pending if p.waits_for_input]
    children = [child for p in state.pending if (child := p.waiting_child)]
    said = [f"a person: {', '.join(people)}"] if people else []
    said += [f"sub-agent {child}" for child in children]
    return "; ".join(said)


async def run_rows(store: SqlRunStore, status: str | None, text: str, person: Person) -> list[RunRow]:
    """The runs in tree order; `status` one of STATUSES (else all), `text` matched in id, task and agent."""
    found = await store.list_runs(LISTED, status=status if status in STATUSES else None)  # type: ignore[arg-type]
    found = [s for s in found if person.sees(s.agent_name)]
    needle = text.strip().lower()
    if needle:
        found = [s for s in found if needle in f"{s.run_id}\n{s.task}\n{s.agent_name}".lower()]
    rows = []
    for depth, summary in as_tree(found):
        if summary.status == "waiting_for_approval":
            said = waits_for(await store.load(summary.run_id))
        elif summary.claimed_by:
            said = f"driven by {summary.claimed_by}"
        else:
            said = ""
        rows.append(RunRow(depth, summary, said))
    return rows


@dataclass(frozen=True)
class RunView:
    root: RunState
    children: dict[str, RunState]
    decided: dict[tuple[str, str], DecisionRecord]
    late: list[LateOutcome]
    """Calls that completed on a worker after it had lost the run (store/events.py)."""


async def run_view(store: SqlRunStore, run_id: str, person: Person) -> RunView:
    root, children = await seen_tree(store, run_id, person)
    decided = {(d.run_id, d.call_id): d for rid in [run_id, *children] for d in await store.decisions(rid)}
    return RunView(root, children, decided, await late_recorded(store, run_id))


@dataclass(frozen=True)
class Waiting:
    state: RunState
    pending: PendingCall


async def waiting_calls(store: SqlRunStore, person: Person, run_id: str | None = None) -> list[Waiting]:
    """Calls waiting for this person, of one run (and its sub-agents) or of all runs, oldest first: an approval, or
    an answer to the question its tool asked (`pending_input`, its `input` the question)."""
    if run_id is None:
        states = await store.waiting()
    else:
        root, children = await seen_tree(store, run_id, person)
        states = [root, *children.values()]
    found = [
        Waiting(s, p)
        for s in states
        for p in s.pending
        if p.waits_for_person and person.decides(s.agent_name, p.call.name)
    ]
    return sorted(found, key=lambda w: (w.pending.since, w.state.run_id, w.pending.call.id))


async def waiting_question(store: SqlRunStore, run_id: str, call_id: str, person: Person) -> Waiting | None:
    """The question call `call_id` of `run_id` waits to have answered, or None (answered already, or no question:
    store/answers.py then says so when asked to record one)."""
    state = await seen_run(store, run_id, person)
    found = [p for p in waiting_for_input(state) if p.call.id == call_id]
    return Waiting(state, found[0]) if found else None


async def seen_run(store: SqlRunStore, run_id: str, person: Person) -> RunState:
    """The run, if the person may see it; else RunNotFound, as for a run that does not exist (a URL tells nothing)."""
    state = await store.load(run_id)
    if not person.sees(state.agent_name):
        raise RunNotFound(run_id)
    return state


async def seen_tree(store: SqlRunStore, run_id: str, person: Person) -> tuple[RunState, dict[str, RunState]]:
    """The run and the sub-agent runs below it that the person may see."""
    root, children = await load_tree(store, run_id)
    if not person.sees(root.agent_name):
        raise RunNotFound(run_id)
    return root, {rid: child for rid, child in children.items() if person.sees(child.agent_name)}


async def may_decide(store: SqlRunStore, run_id: str, call_id: str, person: Person) -> bool:
    """Whether the person may decide call `call_id` of `run_id`, checked before a decision or answer is recorded (a
    call no longer pending is left to the record, which says it was decided); RunNotFound for a run they do not see."""
    state = await seen_run(store, run_id, person)
    return all(person.decides(state.agent_name, p.call.name) for p in state.pending if p.call.id == call_id)


async def seen_decisions(store: SqlRunStore, person: Person, limit: int) -> list[DecisionRecord]:
    """The latest decisions on runs the person may see."""
    found = await store.decisions(limit=limit if person is EVERYONE else LISTED)
    return (await _seen(store, person, found, lambda d: d.run_id))[:limit]


async def seen_answers(store: SqlRunStore, person: Person, limit: int) -> list[dict[str, Any]]:
    """The latest answers to tools' questions on runs the person may see."""
    found = await recent_answers(store, limit if person is EVERYONE else LISTED)
    return (await _seen(store, person, found, lambda a: str(a["run_id"])))[:limit]


async def _seen(store: SqlRunStore, person: Person, found: list[T], run_of: Callable[[T], str]) -> list[T]:
    if person is EVERYONE or not found:
        return found
    ids = sorted({run_of(one) for one in found})

    def read(tx: Tx) -> dict[str, str]:
        marks = ", ".join("?" for _ in ids)
        rows = tx.execute(f"SELECT run_id, agent_name FROM runs WHERE run_id IN ({marks})", tuple(ids)).fetchall()
        return {str(r[0]): unescape(r[1]) for r in rows}

    agents = await store.transaction(read)
    return [one for one in found if run_of(one) in agents and person.sees(agents[run_of(one)])]
