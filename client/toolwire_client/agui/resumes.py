"""A front end's resume (RunAgentInput.resume: one entry per interrupt it answers) recorded as `toolwire approve`,
`reject` and `answer` record a decision: through fleet/decide.py, under the person's name, checked against what the
person may decide. Every entry is checked before any is recorded; a refusal records nothing more and says why."""

import json
from collections.abc import Awaitable, Callable
from typing import Any

from ag_ui.core import ResumeEntry

from toolwire_client.fleet.decide import decide_and_wake
from toolwire_client.run.state import PendingCall
from toolwire_client.store import ApprovalRefused, RunNotFound, SqlRunStore, answers
from toolwire_client.store import approvals as decisions
from toolwire_client.ui.people import Person
from toolwire_shared.elicitation import InputAnswer

CANCELLED = "cancelled in the front end"
APPROVAL_PAYLOAD = '{"approved": true} or {"approved": false, "reason": "why not"}'


class Refused(Exception):
    """A request refused, recording nothing: its HTTP status and why (one line)."""

    def __init__(self, status: int, said: str) -> None:
        super().__init__(said)
        self.status = status


Decide = Callable[[SqlRunStore], Awaitable[PendingCall]]


async def record(
    db: str | None, store: SqlRunStore, root_id: str, entries: list[ResumeEntry], person: Person
) -> list[str]:
    """Record every entry's decision; the fleet workflows woken (none: the run is local, resumed by the caller)."""
    found = [await _checked(store, root_id, entry, person) for entry in entries]
    woken = []
    for run_id, decide in found:
        try:
            _, workflow = await decide_and_wake(db, store, run_id, decide)
        except ApprovalRefused as exc:
            raise Refused(409, str(exc)) from exc
        woken += [workflow] if workflow else []
    return woken


async def _checked(store: SqlRunStore, root_id: str, entry: ResumeEntry, person: Person) -> tuple[str, Decide]:
    """The run an entry answers and its decision, once the entry is found to answer a call of this thread that
    waits for a person the caller may decide, with a payload that says what to do."""
    run_id, _, call_id = entry.interrupt_id.partition("/")
    if not run_id or not call_id:
        raise Refused(400, f"interrupt id {entry.interrupt_id!r} is not one this endpoint gave (RUN/CALL)")
    try:
        state = await store.load(run_id)
        theirs = person.sees(state.agent_name) and await decisions.root_run(store, run_id) == root_id
    except RunNotFound:
        theirs = False
    if not theirs:
        raise Refused(404, f"interrupt {entry.interrupt_id} is of no run of this thread")
    waiting = [p for p in state.pending if p.call.id == call_id and p.waits_for_person]
    if not waiting:
        raise Refused(409, f"call {call_id} of run {run_id} does not wait for a person (decided already?)")
    if not person.decides(state.agent_name, waiting[0].call.name):
        raise Refused(403, f"{person.name} may not decide {waiting[0].call.name} of run {run_id}")
    return run_id, _decision(run_id, waiting[0], entry, person.name)


def _decision(run_id: str, pending: PendingCall, entry: ResumeEntry, by: str | None) -> Decide:
    payload = entry.payload if entry.payload is not None else {}
    if not isinstance(payload, dict):
        raise Refused(400, f"the payload answering {entry.interrupt_id} must be a JSON object")
    call_id = pending.call.id
    if pending.waits_for_input and pending.input is not None:
        given = _answer(entry.status, payload)
        if (problem := answers.problem_with(pending.input, given)) is not None:
            fits = f"; what fits: {answers.what_fits(pending.input)}" if pending.input.mode == "form" else ""
            raise Refused(400, f"the answer to {entry.interrupt_id} does not fit: {problem}{fits}")
        return lambda store: answers.answer(store, run_id, call_id, given, by=by)
    if entry.status == "cancelled":
        reason = str(payload.get("reason") or CANCELLED)
        return lambda store: decisions.reject(store, run_id, call_id, reason, by=by)
    approved, shown = payload.get("approved"), payload.get("argsHash")
    if not isinstance(approved, bool) or not (shown is None or isinstance(shown, str)):
        raise Refused(400, f"an approval is answered with {APPROVAL_PAYLOAD}, not {json.dumps(payload)}")
    if approved:
        return lambda store: decisions.approve(store, run_id, call_id, shown_hash=shown, by=by)
    reason = str(payload.get("reason") or "")
    return lambda store: decisions.reject(store, run_id, call_id, reason, shown_hash=shown, by=by)


def _answer(status: str, payload: dict[str, Any]) -> InputAnswer:
    """A question's answer: cancelled, {"action": "decline"}, or the form's values (an empty object for a URL)."""
    if status == "cancelled":
        return InputAnswer(action="cancel")
    if payload.get("action") == "decline" and len(payload) == 1:
        return InputAnswer(action="decline")
    return InputAnswer(action="accept", content=payload or None)
