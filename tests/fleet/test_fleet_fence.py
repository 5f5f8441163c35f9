"""A worker that loses its run while a tool call is on the wire (issue 38): the run is taken over behind its back
(here: its lease handed to another owner, as a takeover after a cut would), the call completes on it anyway. The
worker writes nothing more of the run and says it lost it; what the tool did is on record as a late outcome, which
`toolwire trace show` lists and the model's history never holds."""

import sqlite3
import sys
from contextlib import closing
from pathlib import Path

import pytest
from fleet_procs import start_worker, started
from test_fleet_replay import durable_server, submit_refund_and_note

from helpers.polling import wait_until
from store.procs import DRIVER, cli, kill_pid_in
from toolwire_client.store import open_store
from toolwire_shared.messages import ToolResultMessage

pytestmark = pytest.mark.timeout(180)

THIEF = "worker-2:1:f00d:elsewhere"


def hand_over(db: str, run_id: str) -> None:
    with closing(sqlite3.connect(db, isolation_level=None)) as conn:
        conn.execute("UPDATE runs SET claimed_by = ? WHERE run_id = ?", (THIEF, run_id))


async def test_a_call_that_completes_after_the_run_was_lost_is_a_late_outcome(tmp_path: Path) -> None:
    db, tools_db, gate = str(tmp_path / "runs.db"), tmp_path / "tools.sqlite3", tmp_path / "gate"
    gate.mkdir()
    (gate / "hold_send_note").touch()  # the note is written, then holds before it answers
    driver = (sys.executable, DRIVER, "cli")
    log = tmp_path / "worker.log"
    worker = start_worker(
        db, log, concurrency=1, command=driver, env_extra={"DURABLE_GATE_DIR": str(gate)},
        servers=[durable_server(tools_db, gate)],
    )  # fmt: skip
    store = await open_store(db)
    try:
        wait_until(lambda: started(worker), "the worker to take runs", timeout_s=60, interval_s=0.1)
        run_id = await submit_refund_and_note(store, db, tools_db, gate)
        wait_until((gate / "send_note_started").exists, "the note to be in flight", timeout_s=60, interval_s=0.05)
        hand_over(db, run_id)
        (gate / "release").touch()
        wait_until(lambda: "late outcome of" in log.read_text(), "the late outcome on record", timeout_s=60)
        text = log.read_text()
        assert f"lost run {run_id} to another worker" in text and "could not be driven" not in text, text
        held = await store.load(run_id)
        assert held.status == "running"
        assert [r for step in held.steps for r in step.results] == []  # its results were never written
        assert not [m for m in held.messages if isinstance(m, ToolResultMessage)]
        held.status, held.stop_reason, held.report = "stopped", "stopped", "ended by its new holder"
        await store.save(held, owner=THIEF)
    finally:
        worker.stop()
        kill_pid_in(gate / "send_note_started")
        await store.aclose()
    shown = cli(db, "trace", "show", run_id, real=True)
    assert shown.returncode == 0, shown.stderr
    late = [line for line in shown.stdout.splitlines() if line.startswith("late outcome")]
    assert late, shown.stdout
    assert any(line.startswith("late outcome | send_note (call_note) | ") for line in late), late
    assert all("after it lost the run; not in the model's history" in line for line in late), late
