"""kill -9 of a run waiting for approval, approval and resume from other processes; a resumer killed mid-run leaves an
orphaned claim that the next resume takes over; nothing runs twice."""

from pathlib import Path

import anyio
from procs import cli_popen, kill9, load, rows, run_cli, setup_dirs, spawn_run

from helpers.polling import await_until


async def test_kill_while_waiting_then_approve_and_resume_elsewhere(db: str, tmp_path: Path) -> None:
    tools_db, gate = setup_dirs(tmp_path)
    proc = spawn_run(db, "run_wait_kill", tools_db, gate, env={"DURABLE_STAY": "1"}, risky=("refund",))
    await await_until(anyio.Path(gate / "stayed").exists, "the run to wait for approval", proc=proc)
    kill9(proc)
    waiting = await load(db, "run_wait_kill")
    assert waiting.status == "waiting_for_approval"
    assert [(p.call.name, p.state) for p in waiting.pending] == [("refund", "pending_approval")]
    assert rows(tools_db, "SELECT COUNT(*) FROM refunds") == [(0,)]  # not run without a person

    approved = await run_cli(db, "approve", "run_wait_kill", "call_refund")
    assert approved.returncode == 0, approved.stderr
    # The resumer dies in its next model call, holding the claim; a later resume takes the orphaned claim over.
    hang = {"DURABLE_HANG_STEP": "2", "DURABLE_GATE_DIR": str(gate)}
    resumer = cli_popen(db, "resume", "run_wait_kill", env=hang)
    await await_until(anyio.Path(gate / "model_started").exists, "the resumed model call", proc=resumer)
    kill9(resumer)
    assert rows(tools_db, "SELECT COUNT(*) FROM refunds") == [(1,)]

    done = await run_cli(db, "resume", "run_wait_kill")
    assert done.returncode == 0, done.stderr
    final = await load(db, "run_wait_kill")
    assert (final.status, final.stop_reason) == ("done", "final_answer")
    assert rows(tools_db, "SELECT COUNT(*) FROM refunds") == [(1,)]
    again = await run_cli(db, "resume", "run_wait_kill")
    assert again.returncode == 1 and "is done" in again.stderr
    assert rows(tools_db, "SELECT COUNT(*) FROM refunds") == [(1,)]
