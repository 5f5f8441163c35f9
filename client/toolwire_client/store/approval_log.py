"""The approval events as SQL (append-only: approve, reject, use, tampered; store/approval_rules.py judges them) and
a person's decision written onto the saved run in the same transaction."""

from collections.abc import Callable
from datetime import datetime
from typing import Any

from toolwire_client.run.state import PendingCall, RunState, args_hash, now
from toolwire_client.store import rows
from toolwire_client.store.approval_rules import ApprovalEvent, NotApproved, Verdict, binding, verdict
from toolwire_client.store.approval_rules import decision as decision_of
from toolwire_client.store.base import DecisionRecord, Ruling
from toolwire_client.store.text_codec import escape, escape_opt, unescape, unescape_opt
from toolwire_shared.messages import ToolCall
from toolwire_shared.persistence import Tx

PendingChange = Callable[[Tx, RunState, datetime], PendingCall]
"""Moves one pending call of the run read for it (change_pending), at the time given; raises to refuse."""


class ApprovalRefused(Exception):
    """A decision that would not be safe to record (fail closed): the reason says what was wrong."""


def events(tx: Tx, run_id: str, call_id: str) -> list[ApprovalEvent]:
    found = tx.execute(
        "SELECT event, binding, reason FROM approval_events WHERE run_id = ? AND call_id = ?",
        (run_id, escape(call_id)),
    ).fetchall()
    return [ApprovalEvent(r[0], r[1], unescape_opt(r[2])) for r in found]


def append(tx: Tx, run_id: str, call: ToolCall, event: str, reason: str | None = None, by: str | None = None) -> None:
    tx.execute(
        "INSERT INTO approval_events (run_id, call_id, tool, binding, event, reason, decided_by, at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            run_id,
            escape(call.id),
            escape(call.name),
            binding(run_id, call),
            event,
            escape_opt(reason),
            escape_opt(by),
            tx.timestamp(now()),
        ),
    )


def change_pending(tx: Tx, token: object, run_id: str, change: PendingChange) -> PendingCall:
    """Read the run (its row held), let `change` move one of its pending calls by a person's decision or answer
    (raising, it records nothing), and write the run back as its next version, header and log as a save writes
    them. Returns the call as changed."""
    stamp = now()
    state = rows.read(tx, token, run_id, lock=True)[0]
    version = state.version
    pending = change(tx, state, stamp)
    rows.rewrite(tx, token, state, version, stamp)
    return pending


def decide(tx: Tx, token: object, run_id: str, call_id: str, ruling: Ruling) -> PendingCall:
    def decided(tx: Tx, state: RunState, stamp: datetime) -> PendingCall:
        previous = decision_of(events(tx, run_id, call_id))
        pending = _check_decidable(state, call_id, previous, ruling.shown_hash)
        pending.decide(ruling.decision, ruling.reason, ruling.by)
        return pending

    pending = change_pending(tx, token, run_id, decided)
    append(tx, run_id, pending.call, ruling.decision, ruling.reason, ruling.by)
    return pending


def authorize(tx: Tx, run_id: str, call: ToolCall, idempotent: bool) -> Verdict | NotApproved:
    """The verdict of the record (a `use` appended when it runs), or the NotApproved to raise once the `tampered`
    event appended for it is committed."""
    tx.execute(f"SELECT version FROM runs WHERE run_id = ?{tx.dialect.for_update}", (run_id,))
    try:
        found = verdict(events(tx, run_id, call.id), binding(run_id, call), idempotent)
    except NotApproved as exc:
        append(tx, run_id, call, "tampered", str(exc))
        return exc
    if found == "run":
        append(tx, run_id, call, "use")
    return found


def decisions(tx: Tx, run_id: str | None, limit: int) -> list[DecisionRecord]:
    where, params = (" AND run_id = ?", (run_id,)) if run_id else ("", ())
    found = tx.execute(
        "SELECT run_id, call_id, tool, event, decided_by, reason, at FROM approval_events"
        f" WHERE event IN ('approve', 'reject'){where} ORDER BY at DESC LIMIT ?",
        (*params, limit),
    ).fetchall()
    return [
        DecisionRecord(
            run_id=r[0],
            call_id=unescape(r[1]),
            tool=unescape(r[2]),
            decision=r[3],
            decided_by=unescape_opt(r[4]),
            reason=unescape_opt(r[5]),
            at=r[6],
        )
        for r in found
    ]


def tampered(tx: Tx, limit: int) -> list[tuple[str, str, str, str | None, Any]]:
    found = tx.execute(
        "SELECT run_id, call_id, tool, reason, at FROM approval_events WHERE event = 'tampered'"
        " ORDER BY at DESC LIMIT ?",
        (limit,),
    ).fetchall()
    return [(r[0], unescape(r[1]), unescape(r[2]), unescape_opt(r[3]), r[4]) for r in found]


def _check_decidable(
    state: RunState, call_id: str, previous: ApprovalEvent | None, shown_hash: str | None
) -> PendingCall:
    if previous is not None:  # first: once the run went on, the call is no longer pending, but it was decided
        raise ApprovalRefused(f"call '{call_id}' of run {state.run_id} was already decided ({previous.event})")
    match = [p for p in state.pending if p.call.id == call_id]
    if not match:
        asked = [p.call.id for p in state.pending if p.waits_for_approval]
        listing = ", ".join(asked) if asked else "none"
        raise ApprovalRefused(
            f"run {state.run_id} never asked for approval of call '{call_id}'; calls waiting: {listing}"
        )
    pending = match[0]
    if not pending.waits_for_approval:
        raise ApprovalRefused(f"call '{call_id}' of run {state.run_id} is not waiting for approval ({pending.state})")
    if args_hash(pending.call.arguments) != pending.args_hash:
        raise ApprovalRefused(
            f"the arguments of call '{call_id}' changed after approval was asked for; nothing was recorded"
        )
    if shown_hash is not None and not pending.args_hash.startswith(shown_hash):
        raise ApprovalRefused(
            f"call '{call_id}' has arguments hash {pending.args_hash[:12]}, not the {shown_hash} you were shown; "
            "look again with `toolwire approvals`"
        )
    return pending
