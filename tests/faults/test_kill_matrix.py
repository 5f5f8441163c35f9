"""kill -9 of the driver at seeded random points of a run with a risky refund (approved by a person in between),
then resume until it ends: every trial ends with exactly one refund (none lost, none twice) and none before the
approval. The refund is idempotent by key; the note is not (a note in flight at a kill is answered "outcome
unknown", never sent again)."""

import random
import subprocess
from pathlib import Path

import anyio
import pytest

from helpers.polling import await_until
from store.procs import cli_popen, kill9, kill_pid_in, load, rows, run_cli, setup_dirs, spawn_run
from toolwire_client.mistakes import WAITING

SEED = 20261202
TRIALS = 6
# Where a driver can die: in a model call (step 1 or 2), with the refund's write done but its answer not back, or
# while the run waits for a person.
POINTS = ("model_step_1", "model_step_2", "refund_in_flight", "waiting")


def plan(seed: int, n: int) -> list[str]:
    """Every point once in a seeded order, then seeded picks."""
    rng = random.Random(seed)
    return rng.sample(POINTS, len(POINTS)) + [rng.choice(POINTS) for _ in range(n - len(POINTS))]


async def _until(path: Path, what: str, proc: subprocess.Popen[str]) -> None:
    await await_until(anyio.Path(path).exists, what, proc=proc)


async def _finish(db: str, run_id: str) -> None:
    for _ in range(4):  # resume until the run ends (each resume goes as far as it can)
        state = await load(db, run_id)
        if state.status not in ("running", "waiting_for_approval"):
            return
        if state.status == "waiting_for_approval":
            approved = await run_cli(db, "approve", run_id, "call_refund")
            assert approved.returncode == 0, approved.stderr
        resumed = await run_cli(db, "resume", run_id)
        assert resumed.returncode in (0, WAITING) and "Traceback" not in resumed.stderr, resumed.stderr


def count(tools_db: Path, table: str) -> int:
    """Side effects so far (the tools make their database on their first call: no file, nothing done yet)."""
    return int(rows(tools_db, f"SELECT COUNT(*) FROM {table}")[0][0]) if tools_db.exists() else 0


async def _first_drive(db: str, run_id: str, tools_db: Path, gate: Path, point: str) -> None:
    """`toolwire run` of the task: killed in its first model call or while it waits, else left to pause."""
    env = {"model_step_1": {"DURABLE_HANG_STEP": "1"}, "waiting": {"DURABLE_STAY": "1"}}.get(point, {})
    proc = spawn_run(db, run_id, tools_db, gate, env=env, risky=("refund",))
    if point in ("model_step_1", "waiting"):
        await _until(gate / ("model_started" if point == "model_step_1" else "stayed"), point, proc)
        kill9(proc)
        return
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "waiting_for_approval" in out, err  # a driver script, not the CLI


async def _killed_resume(db: str, run_id: str, gate: Path, point: str) -> None:
    """After the approval, a resume killed in its next model call or with the refund's write done."""
    approved = await run_cli(db, "approve", run_id, "call_refund")
    assert approved.returncode == 0, approved.stderr
    env = {"DURABLE_GATE_DIR": str(gate)}
    if point == "model_step_2":
        resumer = cli_popen(db, "resume", run_id, env={**env, "DURABLE_HANG_STEP": "2"})
        await _until(gate / "model_started", "the resumed model call", resumer)
    else:
        (gate / "hold_refund").touch()
        resumer = cli_popen(db, "resume", run_id, env=env)
        await _until(gate / "refund_started", "the refund in flight", resumer)
    kill9(resumer)
    kill_pid_in(gate / "refund_started")  # the killed driver's orphaned stdio server
    (gate / "hold_refund").unlink(missing_ok=True)


@pytest.mark.parametrize("trial", range(TRIALS))
async def test_kill9_at_a_seeded_point_loses_nothing_and_runs_nothing_twice(
    db: str, tmp_path: Path, trial: int
) -> None:
    point = plan(SEED, TRIALS)[trial]
    tools_db, gate = setup_dirs(tmp_path)
    run_id = f"run_kill_{trial}"
    await _first_drive(db, run_id, tools_db, gate, point)
    assert count(tools_db, "refunds") == 0, "a refund ran before any approval"
    if point in ("model_step_2", "refund_in_flight"):
        await _killed_resume(db, run_id, gate, point)
    await _finish(db, run_id)
    final = await load(db, run_id)
    assert (final.status, final.stop_reason) == ("done", "final_answer"), final.report
    assert count(tools_db, "refunds") == 1, point  # none lost, none twice
    assert count(tools_db, "notes") == 1, point  # the note too: never sent twice


def test_the_plan_covers_more_than_one_point() -> None:
    assert set(plan(SEED, TRIALS)) == set(POINTS)
