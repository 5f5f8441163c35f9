"""`toolwire approvals` lists calls waiting for a person (an approval, or an answer to a tool's question); `approve`
and `reject` record a decision on one (`answer`, cli/answer.py, an answer)."""

import json
from typing import Any

import click
from rich.console import Console
from rich.table import Column, Table

from toolwire_client import texts
from toolwire_client.cli._json import json_option
from toolwire_client.cli._store import db_option, store_name, with_store
from toolwire_client.fleet.decide import Decide, decide_and_wake
from toolwire_client.run.state import PendingCall, RunState
from toolwire_client.store import SqlRunStore
from toolwire_client.store import approvals as decisions
from toolwire_client.store.answers import recent_answers, waiting_for_input
from toolwire_client.store.base import DecisionRecord
from toolwire_shared.records import record_json
from toolwire_shared.terminal import inert, inert_json, shown

HASH_SHOWN = 12
DECIDED_SHOWN = 20
"""The latest decisions `toolwire approvals` shows under the waiting calls."""
UNKNOWN = "(not recorded)"
"""The approver of a decision recorded before approvers were kept."""
AS_HELP = "Who decides, as recorded with the decision (default: the OS user)."
STILL_WAITING = ("pending_approval", "pending_input", "waiting_on_child")
"""A run with none of these calls waits for nobody: it waits for a resume (one the console could not do)."""


@click.command("approvals")
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the waiting calls as a JSON list.")
def approvals(db: str | None, as_json: bool) -> None:
    """List waiting calls: run, call id, tool, arguments, args hash, since when."""

    async def work(
        store: SqlRunStore,
    ) -> tuple[list[RunState], list[tuple[str, str, str, str | None, Any]], list[DecisionRecord], list[dict[str, Any]]]:
        decided = await store.decisions(limit=DECIDED_SHOWN)
        return await store.waiting(), await store.tampered(), decided, await recent_answers(store, DECIDED_SHOWN)

    states, tampered, decided, answered = with_store(db, work)
    waiting = [(state, p) for state in states for p in state.pending if p.waits_for_approval]
    asked = [(state, p) for state in states for p in waiting_for_input(state)]
    stalled = [state.run_id for state in states if not any(p.state in STILL_WAITING for p in state.pending)]
    if as_json:
        rows = [{"run_id": state.run_id, **record_json(p)} for state, p in waiting + asked]
        flagged = [
            {"run_id": r, "call_id": c, "tool": t, "tampered": why, "at": str(at)} for r, c, t, why, at in tampered
        ]
        decisions = [d.model_dump(mode="json") for d in decided]
        listing = {
            "waiting": rows,
            "tampered": flagged,
            "decided": decisions,
            "answered": answered,
            "decided_not_resumed": stalled,
        }
        click.echo(json.dumps(listing, indent=2))
        return
    console = Console(width=220)
    if not waiting and not asked:
        console.print(shown(f"no calls wait for approval in {store_name(db)}"), markup=False, highlight=False)
    elif waiting:
        arguments = Column("arguments", max_width=48, overflow="fold")  # the rest of a row keeps its width
        headers: list[str | Column] = ["run", "call id", "tool", arguments, "hash", "since", "why"]
        table = ids_first([*headers, Column("note", no_wrap=True)], [(state.run_id, p.call.id) for state, p in waiting])
        for state, p in waiting:
            args = json.dumps(p.call.arguments, sort_keys=True)
            since = p.since.astimezone().strftime("%Y-%m-%d %H:%M:%S")
            child = "script" if state.script is not None else "sub-agent"  # a run_code call's script, or delegate's
            note = p.decision_reason or (f"{child} of {state.parent_run_id}" if state.parent_run_id else "")
            waits_for = p.approval_reason or ""
            add_row(table, state.run_id, p.call.id, p.call.name, args, p.args_hash[:HASH_SHOWN], since, waits_for, note)
        console.print(table)
    if asked:
        print_questions(console, asked)
    for run_id in stalled:
        console.print(shown(texts.decided_not_resumed(run_id)), markup=False, highlight=False)
    if tampered:
        ids = [(r, c) for r, c, *_ in tampered]
        flagged_table = ids_first(["run", "call id", "tool", "what was wrong", "when"], ids, "not run: tampered")
        for run_id, call_id, tool, why, when in tampered:
            add_row(flagged_table, run_id, call_id, tool, why or "", str(when)[:19])
        console.print(flagged_table)
    if decided:
        ids = [(d.run_id, d.call_id) for d in decided]
        decided_table = ids_first(["run", "call id", "tool", "decision", "by", "reason", "when"], ids, "decided")
        for d in decided:
            when = d.at.astimezone().strftime("%Y-%m-%d %H:%M:%S")
            by = d.decided_by or UNKNOWN
            add_row(decided_table, d.run_id, d.call_id, d.tool, d.decision, by, d.reason or "", when)
        console.print(decided_table)
    if answered:
        ids = [(a["run_id"], a["call_id"]) for a in answered]
        answered_table = ids_first(["run", "call id", "tool", "answer", "by", "when"], ids, "answered")
        for a in answered:
            given = a["content"] if a["content"] is not None else a["action"]
            add_row(answered_table, a["run_id"], a["call_id"], a["tool"], given, a["by"] or UNKNOWN, a["at"])
        console.print(answered_table)


def print_questions(console: Console, asked: list[tuple[RunState, PendingCall]]) -> None:
    """The calls whose tool asked a person a question: the server's message and what it asks for (the form's
    schema, or the URL to visit), answered with `toolwire answer RUN CALL --value '{...}'` (or --accept, --decline)."""
    headers: list[str | Column] = ["run", "call id", "tool", Column("question", max_width=60, overflow="fold")]
    table = ids_first([*headers, Column("asks for", max_width=70, overflow="fold"), "since"],
                      [(state.run_id, p.call.id) for state, p in asked], "input requested")  # fmt: skip
    for state, p in asked:
        wanted = p.input
        assert wanted is not None
        asks = f"visit {wanted.url}" if wanted.mode == "url" else json.dumps(wanted.requested_schema, sort_keys=True)
        since = p.since.astimezone().strftime("%Y-%m-%d %H:%M:%S")
        add_row(table, state.run_id, p.call.id, p.call.name, wanted.message, asks, since)
    table.caption = (
        "answer: toolwire answer RUN CALL --value '{...}' (a form) | --accept (a URL) | --decline | --cancel"
    )
    console.print(table)


def ids_first(headers: list[str | Column], ids: list[tuple[str, str]], title: str | None = None) -> Table:
    """A table whose first two columns, the run and call ids a person copies into `approve`, are never cut."""
    widths = [max([len(str(h)), *(len(shown(row[i])) for row in ids)]) for i, h in enumerate(headers[:2])]
    columns = [Column(str(h), no_wrap=True, min_width=w) for h, w in zip(headers[:2], widths, strict=True)]
    return Table(*columns, *headers[2:], title=title)


def add_row(table: Table, *cells: object) -> None:
    """A row of stored text (ids, names, arguments, a server's question): each cell shown exactly and inert."""
    table.add_row(*(inert(cell) for cell in cells))


def _said(verb: str, run_id: str, p: PendingCall, workflow: str | None) -> str:
    args = json.dumps(p.call.arguments, sort_keys=True)
    go_on = (
        f"the worker fleet goes on with it (workflow {workflow})"
        if workflow
        else f"`toolwire resume {run_id}` to go on"
    )
    by = f", by {p.decided_by}" if p.decided_by else ""
    return f"{verb} {p.call.id}: {p.call.name}({args}) [hash {p.args_hash[:HASH_SHOWN]}] of run {run_id}{by}; {go_on}"


def _decided(db: str | None, run_id: str, decide: Decide, as_json: bool) -> None:
    """Record the decision; a run that was submitted to the worker fleet is told (its workflow waits for it)."""

    async def work(store: SqlRunStore) -> tuple[PendingCall, str | None]:
        return await decide_and_wake(db, store, run_id, decide)

    pending, workflow = with_store(db, work)
    if as_json:
        said: dict[str, Any] = {"run_id": run_id, "call_id": pending.call.id, "tool": pending.call.name}
        said |= {"arguments": pending.call.arguments, "args_hash": pending.args_hash, "decision": pending.decided_as}
        said |= {"by": pending.decided_by, "reason": pending.decision_reason, "workflow": workflow}
        click.echo(inert_json(json.dumps(said, indent=2)))
        return
    click.echo(shown(_said(pending.decided_as, run_id, pending, workflow)))


@click.command("approve")
@click.argument("run_id")
@click.argument("call_id", required=False)
@click.option("--hash", "shown_hash", default=None, help="The args hash you were shown; refused if it differs.")
@click.option("--as", "approver", default=None, metavar="NAME", help=AS_HELP)
@json_option("Print the decision as JSON.")
@db_option
def approve(
    run_id: str, call_id: str | None, shown_hash: str | None, approver: str | None, as_json: bool, db: str | None
) -> None:
    """Approve CALL_ID of RUN_ID (or its only waiting call). Used once, for exactly these arguments."""

    async def work(store: SqlRunStore) -> PendingCall:
        return await decisions.approve(store, run_id, call_id, shown_hash=shown_hash, by=approver)

    _decided(db, run_id, work, as_json)


@click.command("reject")
@click.argument("run_id")
@click.argument("call_id", required=False)
@click.option("--reason", required=True, help="Why; the model reads it and picks another path.")
@click.option("--hash", "shown_hash", default=None, help="The args hash you were shown; refused if it differs.")
@click.option("--as", "approver", default=None, metavar="NAME", help=AS_HELP)
@json_option("Print the decision as JSON.")
@db_option
def reject(
    run_id: str,
    call_id: str | None,
    reason: str,
    shown_hash: str | None,
    approver: str | None,
    as_json: bool,
    db: str | None,
) -> None:
    """Reject CALL_ID of RUN_ID (or its only waiting call) with a reason."""

    async def work(store: SqlRunStore) -> PendingCall:
        return await decisions.reject(store, run_id, call_id, reason, shown_hash=shown_hash, by=approver)

    _decided(db, run_id, work, as_json)
