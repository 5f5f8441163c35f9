"""Hole 10: an approval names who decided. `toolwire approve --as NAME` (default: the OS user) and `reject --as NAME`
append the approver to the approval events (the record); `toolwire approvals` (table and --json) and the trace
(`trace show`, `--json`, `trace export`) show it, read from the record. Decisions recorded before approvers were kept
migrate with no approver ("(not recorded)")."""

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from store.procs import run_cli, setup_dirs, waiting_run
from toolwire_client.run.state import RunState
from toolwire_client.store import open_store
from toolwire_client.store import sql as store_sql
from toolwire_client.store.schema import MIGRATIONS, SCHEMA
from toolwire_client.store.sql import Tx
from toolwire_client.store.text_codec import ESCAPE

LONG_AGO = datetime(2026, 1, 1, tzinfo=UTC)


async def test_approve_and_reject_record_who_decided_and_everything_shows_it(db: str, tmp_path: Path) -> None:
    tools_db, gate = setup_dirs(tmp_path)
    for run_id in ("run_alice", "run_default", "run_bob"):
        await waiting_run(db, run_id, tools_db, gate)

    approved = await run_cli(db, "approve", "run_alice", "--as", "alice")
    assert (
        approved.returncode == 0
        and "approved call_refund" in approved.stdout
        and "of run run_alice, by alice;" in approved.stdout
    ), approved.stderr
    as_os_user = await run_cli(db, "approve", "run_default", env={"LOGNAME": "carol", "USER": "carol"})
    assert as_os_user.returncode == 0 and ", by carol;" in as_os_user.stdout, as_os_user.stderr
    rejected = await run_cli(db, "reject", "run_bob", "--as", "bob", "--reason", "no refunds today")
    assert rejected.returncode == 0 and ", by bob;" in rejected.stdout, rejected.stderr
    nameless = await run_cli(db, "approve", "run_bob", "--as", " ")
    assert nameless.returncode != 0 and "an approver needs a name" in nameless.stderr

    listed = json.loads((await run_cli(db, "approvals", "--json")).stdout)
    decided = {d["run_id"]: (d["call_id"], d["decision"], d["decided_by"], d["reason"]) for d in listed["decided"]}
    assert decided == {
        "run_alice": ("call_refund", "approve", "alice", None),
        "run_default": ("call_refund", "approve", "carol", None),
        "run_bob": ("call_refund", "reject", "bob", "no refunds today"),
    }
    table = (await run_cli(db, "approvals")).stdout
    assert "decided" in table and all(name in table for name in ("alice", "carol", "bob", "no refunds today"))

    resumed = await run_cli(db, "resume", "run_alice")
    assert resumed.returncode == 0 and "done" in resumed.stdout, resumed.stdout + resumed.stderr
    shown = (await run_cli(db, "trace", "show", "run_alice")).stdout
    assert 'refund({"amount_cents": 500, "order_id": "A123"}) [approved by alice] | ' in shown, shown
    assert "[rejected by bob]" in (await run_cli(db, "trace", "show", "run_bob")).stdout
    as_json = json.loads((await run_cli(db, "trace", "show", "run_alice", "--json")).stdout)
    [refund] = [c for s in as_json["steps"] for c in s["calls"] if c["name"] == "refund"]
    assert (refund["decision"]["decision"], refund["decision"]["decided_by"]) == ("approve", "alice")
    exported = json.loads((await run_cli(db, "trace", "export", "run_alice")).stdout)
    assert [(a["call_id"], a["decided_by"]) for a in exported["approvals"]] == [("call_refund", "alice")]
    assert exported["run_id"] == "run_alice" and exported["messages"]


async def test_decisions_recorded_before_approvers_migrate_with_none(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store at schema 4 (before escaping and approvers) with a decision whose reason holds the escape character
    itself: opened by this toolwire, it migrates, the reason reads back exactly, and the approver is unknown."""
    reason = f"too much {ESCAPE}0 {ESCAPE}e"
    with monkeypatch.context() as old:
        old.setattr(store_sql, "SCHEMA", dataclasses.replace(SCHEMA, migrations=MIGRATIONS[:4]))
        store = await open_store(db)
        try:
            state = RunState(run_id="run_old", agent_name="agent", task=f"old {ESCAPE}", model="m")

            def old_rows(tx: Tx) -> None:  # as the toolwire of schema 4 wrote them: text as it was
                at, body = tx.timestamp(LONG_AGO), tx.json(state.model_dump_json())
                tx.execute(
                    "INSERT INTO runs (run_id, agent_name, task, status, steps, tokens, started_at, updated_at,"
                    " version, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    ("run_old", "agent", state.task, "waiting_for_approval", 1, 0, at, at, 1, body),
                )
                tx.execute(
                    "INSERT INTO approval_events (run_id, call_id, tool, binding, event, reason, at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    ("run_old", "call_1", "refund", "b" * 64, "reject", reason, at),
                )

            await store.transaction(old_rows)
        finally:
            await store.aclose()

    store = await open_store(db)
    try:
        assert await store.schema_version() == MIGRATIONS[-1][0]
        [old_decision] = await store.decisions("run_old")
        assert (old_decision.decided_by, old_decision.reason) == (None, reason)
        [summary] = await store.list_runs()
        assert summary.task == f"old {ESCAPE}" and (await store.load("run_old")).task == f"old {ESCAPE}"
    finally:
        await store.aclose()
    listed = json.loads((await run_cli(db, "approvals", "--json")).stdout)
    assert [(d["run_id"], d["decided_by"], d["reason"]) for d in listed["decided"]] == [("run_old", None, reason)]
    assert "(not recorded)" in (await run_cli(db, "approvals")).stdout
