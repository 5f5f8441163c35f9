"""A risky call runs only with a matching decision on record, whatever the saved run state says: each way of editing
the saved run runs nothing, stops the run as tampered, and shows in `toolwire approvals`."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from helpers.polling import await_until
from store.procs import kill9, load, rows, run_cli, setup_dirs, spawn_run, tamper

State = dict[str, Any]


def _refund(state: State) -> dict[str, Any]:
    return next(p for p in state["pending"] if p["call"]["name"] == "refund")


def rename_approved_call(state: State) -> None:
    """A consistent forgery: the approved refund becomes a call of another tool, in the turn and in its pending copy."""
    for call in state["messages"][-1]["tool_calls"]:
        if call["id"] == "call_refund":
            call["name"] = "send_note"
            call["arguments"] = {"text": "forged"}
    pending = _refund(state)
    pending["call"]["name"], pending["call"]["arguments"] = "send_note", {"text": "forged"}


def mark_sent(state: State) -> None:
    """Never approved, but marked sent by an idempotent tool: a resume would send it again."""
    pending = _refund(state)
    pending["state"], pending["idempotent"] = "sent", True


def mark_approved(state: State) -> None:
    _refund(state)["state"] = "approved"


CASES: dict[str, tuple[Callable[[State], None], bool]] = {
    # case: (the edit, whether a person approved the refund first)
    "approved call renamed to another tool": (rename_approved_call, True),
    "waiting call marked sent": (mark_sent, False),
    "waiting call marked approved": (mark_approved, False),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_an_edited_saved_run_runs_nothing_and_says_tampered(db: str, tmp_path: Path, case: str) -> None:
    edit, approve_first = CASES[case]
    tools_db, gate = setup_dirs(tmp_path)
    proc = spawn_run(db, "run_t", tools_db, gate, env={"DURABLE_STAY": "1"}, risky=("refund",))
    await await_until(anyio.Path(gate / "stayed").exists, "the run to wait for approval", proc=proc)
    kill9(proc)
    notes_before = rows(tools_db, "SELECT COUNT(*) FROM notes")
    if approve_first:
        approved = await run_cli(db, "approve", "run_t", "call_refund")
        assert approved.returncode == 0, approved.stderr
    tamper(db, "run_t", edit)

    resumed = await run_cli(db, "resume", "run_t")
    assert "failed (tampered)" in resumed.stdout, resumed.stdout + resumed.stderr
    assert rows(tools_db, "SELECT COUNT(*) FROM refunds") == [(0,)]
    assert rows(tools_db, "SELECT COUNT(*) FROM notes") == notes_before  # nothing else ran either
    final = await load(db, "run_t")
    assert (final.status, final.stop_reason) == ("failed", "tampered")
    listed = await run_cli(db, "approvals")
    assert "tampered" in listed.stdout and "run_t" in listed.stdout, listed.stdout
    again = await run_cli(db, "resume", "run_t")
    assert again.returncode != 0 and rows(tools_db, "SELECT COUNT(*) FROM refunds") == [(0,)]
