"""Reject from one process, resume from another: the model reads the person's reason and the refund never runs."""

from pathlib import Path

from procs import load, rows, run_cli, setup_dirs, waiting_run

from toolwire_client import texts

REFUNDS = "SELECT COUNT(*) FROM refunds"


async def test_reject_then_resume_in_other_processes(db: str, tmp_path: Path) -> None:
    tools_db, gate = setup_dirs(tmp_path)
    await waiting_run(db, "run_reject", tools_db, gate)
    said = await run_cli(db, "reject", "run_reject", "call_refund", "--reason", "refunds need a manager")
    assert said.returncode == 0 and "rejected call_refund" in said.stdout, said.stderr
    done = await run_cli(db, "resume", "run_reject")
    assert done.returncode == 0, done.stderr
    final = await load(db, "run_reject")
    refund = final.steps[0].results[1]
    assert (refund.error_kind, refund.content) == ("rejected", texts.rejected("refunds need a manager"))
    assert final.final_answer is not None and "a person rejected this action" in final.final_answer
    assert rows(tools_db, REFUNDS) == [(0,)]
