"""What the console's pages read from the run store: the runs list (as a tree, filtered, with whom each waits
for), one run with its sub-agents and recorded decisions, and the calls waiting for a person."""

from dataclasses import dataclass
from typing import get_args

from toolwire_client.run.state import PendingCall, RunState, RunStatus
from toolwire_client.store import RunSummary, SqlRunStore
from toolwire_client.store.answers import waiting_for_input
from toolwire_client.store.base import DecisionRecord
from toolwire_client.store.tree import as_tree, load_tree

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


async def run_rows(store: SqlRunStore, status: str | None, text: str) -> list[RunRow]:
    """The runs in tree order; `status` one of STATUSES (else all), `text` matched in id, task and agent."""
    found = await store.list_runs(LISTED, status=status if status in STATUSES else None)  # type: ignore[arg-type]
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


async def run_view(store: SqlRunStore, run_id: str) -> RunView:
    root, children = await load_tree(store, run_id)
    decided = {(d.run_id, d.call_id): d for rid in [run_id, *children] for d in await store.decisions(rid)}
    return RunView(root, children, decided)


@dataclass(frozen=True)
class Waiting:
    state: RunState
    pending: PendingCall


async def waiting_calls(store: SqlRunStore, run_id: str | None = None) -> list[Waiting]:
    """Calls waiting for a person, of one run (and its sub-agents) or of all runs, oldest first: an approval, or an
    answer to the question its tool asked (`pending_input`, its `input` the question)."""
    if run_id is None:
        states = await store.waiting()
    else:
        root, children = await load_tree(store, run_id)
        states = [root, *children.values()]
    found = [Waiting(s, p) for s in states for p in s.pending if p.waits_for_person]
    return sorted(found, key=lambda w: (w.pending.since, w.state.run_id, w.pending.call.id))


async def waiting_question(store: SqlRunStore, run_id: str, call_id: str) -> Waiting | None:
    """The question call `call_id` of `run_id` waits to have answered, or None (answered already, or no question:
    store/answers.py then says so when asked to record one)."""
    state = await store.load(run_id)
    found = [p for p in waiting_for_input(state) if p.call.id == call_id]
    return Waiting(state, found[0]) if found else None
