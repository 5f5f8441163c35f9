"""Two processes resume the same run at the same moment: exactly one proceeds, the other is told the run is already
being resumed; the approved refund runs once."""

from pathlib import Path

import anyio
from procs import cli_popen, load, rows, run_cli, setup_dirs, waiting_run

from helpers.polling import await_until


async def test_two_resumes_exactly_one_proceeds(db: str, tmp_path: Path) -> None:
    tools_db, gate = setup_dirs(tmp_path)
    await waiting_run(db, "run_race", tools_db, gate)
    assert (await run_cli(db, "approve", "run_race")).returncode == 0

    # The first resumer holds the run while its next model call is in progress (until the test releases it).
    first = cli_popen(db, "resume", "run_race", env={"DURABLE_HANG_STEP": "2", "DURABLE_GATE_DIR": str(gate)})
    await await_until(anyio.Path(gate / "model_started").exists, "the first resume's model call", proc=first)
    second = await run_cli(db, "resume", "run_race")
    assert second.returncode == 3, second.stderr
    assert "run run_race is being driven by another process" in second.stderr

    (gate / "release").touch()
    out, err = await anyio.to_thread.run_sync(lambda: first.communicate(timeout=60))
    assert first.returncode == 0, err
    assert "run_race: done (final_answer)" in out
    assert rows(tools_db, "SELECT COUNT(*) FROM refunds") == [(1,)]
    final = await load(db, "run_race")
    assert final.status == "done" and len(final.steps) == 2
