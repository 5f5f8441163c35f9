"""A double approval is refused; after a resume used the approval, approving or resuming again runs nothing."""

from pathlib import Path

from procs import rows, run_cli, setup_dirs, waiting_run

REFUNDS = "SELECT COUNT(*) FROM refunds"


async def test_double_approval_and_second_resume_run_nothing_more(db: str, tmp_path: Path) -> None:
    tools_db, gate = setup_dirs(tmp_path)
    await waiting_run(db, "run_twice", tools_db, gate)
    first = await run_cli(db, "approve", "run_twice")
    assert first.returncode == 0, first.stderr
    second = await run_cli(db, "approve", "run_twice", "call_refund")
    assert second.returncode == 1 and "already decided (approve)" in second.stderr
    assert (await run_cli(db, "resume", "run_twice")).returncode == 0
    assert rows(tools_db, REFUNDS) == [(1,)]
    late = await run_cli(db, "approve", "run_twice", "call_refund")
    assert late.returncode == 1 and "was already decided (approve)" in late.stderr  # the record, after the run went on
    again = await run_cli(db, "resume", "run_twice")
    assert again.returncode == 1 and "run_twice is done" in again.stderr
    assert rows(tools_db, REFUNDS) == [(1,)]
