"""Fail closed: arguments tampered with before or after approval, a call never asked for, or a hash other than
the one shown: nothing runs, and the reason is said."""

from pathlib import Path

import pytest
from procs import rows, run_cli, setup_dirs, tamper, waiting_run

from toolwire_client.run.state import args_hash
from toolwire_client.store import ApprovalRefused, approvals, open_store

REFUNDS = "SELECT COUNT(*) FROM refunds"


async def test_tampered_arguments_and_unknown_calls_run_nothing(db: str, tmp_path: Path) -> None:
    tools_db, gate = setup_dirs(tmp_path)
    await waiting_run(db, "run_tamper", tools_db, gate)

    def bigger(state: dict) -> None:  # type: ignore[type-arg]
        state["pending"][0]["call"]["arguments"]["amount_cents"] = 50000

    tamper(db, "run_tamper", bigger)
    refused = await run_cli(db, "approve", "run_tamper", "call_refund")
    assert refused.returncode == 1 and "changed after approval was asked for" in refused.stderr

    def restore(state: dict) -> None:  # type: ignore[type-arg]
        state["pending"][0]["call"]["arguments"]["amount_cents"] = 500

    tamper(db, "run_tamper", restore)
    store = await open_store(db)
    try:
        with pytest.raises(ApprovalRefused, match="never asked for approval of call 'call_note'"):
            await approvals.approve(store, "run_tamper", "call_note")  # ran without approval; nothing to approve
        with pytest.raises(ApprovalRefused, match="calls waiting: call_refund"):
            await approvals.approve(store, "run_tamper", "call_made_up")
        with pytest.raises(ApprovalRefused, match="not the 0000 you were shown"):
            await approvals.approve(store, "run_tamper", "call_refund", shown_hash="0000")
        await approvals.approve(store, "run_tamper")
    finally:
        await store.aclose()

    def swap_after_approval(state: dict) -> None:  # type: ignore[type-arg]
        pending = state["pending"][0]
        pending["call"]["arguments"]["amount_cents"] = 50000
        pending["args_hash"] = args_hash(pending["call"]["arguments"])  # a consistent forgery

    tamper(db, "run_tamper", swap_after_approval)
    resumed = await run_cli(db, "resume", "run_tamper")
    assert "failed (tampered)" in resumed.stdout and "the saved run was changed" in resumed.stdout, resumed.stderr
    assert rows(tools_db, REFUNDS) == [(0,)]
    listed = await run_cli(db, "approvals")
    assert "tampered" in listed.stdout and "run_tamper" in listed.stdout and "call_refund" in listed.stdout
