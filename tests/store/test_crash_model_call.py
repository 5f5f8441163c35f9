"""kill -9 during a model call, then `toolwire resume` in another process: the recorded step is kept as it was and
no tool runs again."""

from pathlib import Path

import anyio
from procs import kill9, load, rows, run_cli, setup_dirs, spawn_run

from helpers.polling import await_until


async def test_kill_during_a_model_call_then_resume(db: str, tmp_path: Path) -> None:
    tools_db, gate = setup_dirs(tmp_path)
    proc = spawn_run(db, "run_model_kill", tools_db, gate, env={"DURABLE_HANG_STEP": "2"})
    await await_until(anyio.Path(gate / "model_started").exists, "the second model call", proc=proc)
    kill9(proc)

    crashed = await load(db, "run_model_kill")
    assert crashed.status == "running" and len(crashed.steps) == 1 and crashed.pending == []
    before = [r.content for r in crashed.steps[0].results]
    assert len(before) == 2 and before[0] == "noted: refund on its way"
    assert rows(tools_db, "SELECT COUNT(*) FROM notes") == [(1,)]

    done = await run_cli(db, "resume", "run_model_kill")
    assert done.returncode == 0, done.stderr
    final = await load(db, "run_model_kill")
    assert (final.status, final.stop_reason, len(final.steps)) == ("done", "final_answer", 2)
    assert [r.content for r in final.steps[0].results] == before  # nothing recorded was lost or redone
    assert rows(tools_db, "SELECT COUNT(*) FROM notes") == [(1,)]
    assert rows(tools_db, "SELECT COUNT(*) FROM refunds") == [(1,)]
