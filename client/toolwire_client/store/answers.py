"""A person's answer to the question a tool asked (MCP elicitation), as `toolwire answer` records it: checked against
the question (a form answer must fit the server's schema), appended to the input answers (one per question: a second
answer is refused by the record, whoever races) and written onto the pending call of the saved state, in one
transaction, with who answered (`by`: the OS user unless named). Fail closed: anything unclear records nothing and
raises AnswerRefused saying why and what a right answer looks like."""

import json
from datetime import datetime
from functools import partial
from typing import Any

import jsonschema

from toolwire_client.run.state import PendingCall, RunState
from toolwire_client.store.approvals import default_approver
from toolwire_client.store.sql import ApprovalRefused, SqlRunStore, Tx
from toolwire_client.store.text_codec import escape, escape_opt, unescape_opt
from toolwire_shared.elicitation import InputAnswer, InputWanted


class AnswerRefused(ApprovalRefused):
    """The answer was not recorded; the message says why."""


def problem_with(wanted: InputWanted, answer: InputAnswer) -> str | None:
    """Why `answer` does not answer `wanted` (None when it does): a form's content must fit its schema."""
    if answer.action != "accept":
        return "a decline or cancel carries no content" if answer.content is not None else None
    if wanted.mode == "url":
        return None if answer.content is None else "a URL question is answered by --accept, --decline or --cancel"
    if answer.content is None:
        return "an accepted form needs its values (--value '{...}')"
    errors = sorted(jsonschema.Draft202012Validator(wanted.requested_schema or {}).iter_errors(answer.content), key=str)
    if not errors:
        return None
    where = ".".join(str(p) for p in errors[0].absolute_path)
    return f"{where + ': ' if where else ''}{errors[0].message}"


def what_fits(wanted: InputWanted) -> str:
    """A one-line picture of a right answer: the properties the schema asks for, with their types, and the required."""
    schema = wanted.requested_schema or {}
    fields = {name: spec.get("type", "any") for name, spec in (schema.get("properties") or {}).items()}
    shown = ", ".join(f'"{name}": {kind}' for name, kind in fields.items())
    required = schema.get("required") or []
    return f"{{{shown}}}" + (f" (required: {', '.join(required)})" if required else "")


def waiting_for_input(state: RunState) -> list[PendingCall]:
    return [p for p in state.pending if p.waits_for_input and p.input is not None]


async def answer(
    store: SqlRunStore, run_id: str, call_id: str | None, given: InputAnswer, *, by: str | None = None
) -> PendingCall:
    """Record `given` as the answer to the question call `call_id` (the only one waiting, when None) of `run_id`
    asked, answered by `by` (default: the OS user)."""
    who = default_approver() if by is None else by.strip()
    if not who:
        raise AnswerRefused("an answer needs a name, e.g. --as alice (default: the OS user)")
    signed = given.model_copy(update={"by": who})
    return await store.transaction(lambda tx: store.change_pending(tx, run_id, partial(_record, call_id, signed)))


def _record(call_id: str | None, given: InputAnswer, tx: Tx, state: RunState, stamp: datetime) -> PendingCall:
    pending = _target(tx, state, call_id)
    wanted = pending.input
    assert wanted is not None
    problem = problem_with(wanted, given)
    if problem is not None:
        fits = f"; what fits: {what_fits(wanted)}" if wanted.mode == "form" else ""
        raise AnswerRefused(f"not recorded: {problem}{fits}")
    content = json.dumps(given.content, sort_keys=True) if given.content is not None else None
    tx.execute(
        "INSERT INTO input_answers (run_id, call_id, tool, question, action, content, answered_by, at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            state.run_id,
            escape(pending.call.id),
            escape(pending.call.name),
            escape(wanted.key),
            given.action,
            escape_opt(content),
            escape_opt(given.by),
            tx.timestamp(stamp),
        ),
    )
    pending.answer_with(given)
    return pending


def _target(tx: Tx, state: RunState, call_id: str | None) -> PendingCall:
    waiting = waiting_for_input(state)
    if call_id is None:
        if len(waiting) == 1:
            return waiting[0]
        if not waiting:
            raise AnswerRefused(f"run {state.run_id} has no call waiting for input")
        ids = ", ".join(p.call.id for p in waiting)
        raise AnswerRefused(f"run {state.run_id} has {len(waiting)} calls waiting for input ({ids}); name one")
    match = [p for p in state.pending if p.call.id == call_id]
    if match and match[0] in waiting:
        return match[0]
    before = _recorded(tx, state.run_id, call_id)
    if before is not None:
        action, by = before
        raise AnswerRefused(f"call '{call_id}' of run {state.run_id} was already answered ({action}, by {by})")
    listing = ", ".join(p.call.id for p in waiting) or "none"
    raise AnswerRefused(f"call '{call_id}' of run {state.run_id} does not wait for input; calls waiting: {listing}")


def _recorded(tx: Tx, run_id: str, call_id: str) -> tuple[str, str] | None:
    row = tx.execute(
        "SELECT action, answered_by FROM input_answers WHERE run_id = ? AND call_id = ? ORDER BY at DESC",
        (run_id, escape(call_id)),
    ).fetchone()
    return (row[0], unescape_opt(row[1]) or "(not recorded)") if row else None


async def on_record(store: object, run_id: str, pending: PendingCall) -> bool:
    """Is the answer the saved state carries for this call the one `toolwire answer` recorded? Checked before the
    call is sent again with it, so an answer written into the saved state by hand is never sent. A store that keeps
    no input answers (not SQL) has only the state to go by."""
    if not isinstance(store, SqlRunStore):
        return True
    wanted, given = pending.input, pending.answer
    if wanted is None or given is None:
        return False

    def read(tx: Tx) -> InputAnswer | None:
        row = tx.execute(
            "SELECT action, content, answered_by FROM input_answers WHERE run_id = ? AND call_id = ? AND question = ?",
            (run_id, escape(pending.call.id), escape(wanted.key)),
        ).fetchone()
        if row is None:
            return None
        content = unescape_opt(row[1])
        by = unescape_opt(row[2])
        return InputAnswer(action=row[0], content=json.loads(content) if content is not None else None, by=by)

    return await store.transaction(read) == given


async def recent_answers(store: SqlRunStore, limit: int = 20) -> list[dict[str, Any]]:
    """The latest answers on record, newest first: run, call, tool, question key, action, content, by, when."""

    def read(tx: Tx) -> list[dict[str, Any]]:
        rows = tx.execute(
            "SELECT run_id, call_id, tool, question, action, content, answered_by, at FROM input_answers"
            " ORDER BY at DESC LIMIT ?",
            (limit,),
        ).fetchall()
        keys = ("run_id", "call_id", "tool", "question", "action", "content", "by", "at")
        found = [dict(zip(keys, row, strict=True)) for row in rows]
        for one in found:
            for key in ("call_id", "tool", "question", "content", "by"):
                one[key] = unescape_opt(one[key])
            one["at"] = str(one["at"])[:19]
        return found

    return await store.transaction(read)
