"""The fleet on the durable-run tests' tools and scripted models. A worker killed -9 with a tool call in flight,
its leg taken over by another worker: the leg resumes from the run store (the model is not asked again for a turn
it already answered) and goes on from the first step that never finished; the non-idempotent call that may have
reached its server is answered "outcome unknown" and never sent again, the idempotent one is sent again with its
key and written once. And a sub-agent's approval wakes the fleet run above it (its top run goes on in a new leg)."""

import sqlite3
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest
from fleet_procs import FAST_TAKEOVER, Worker, start_worker, started

from helpers.polling import wait_until
from store.procs import DRIVER, REPO, cli, kill_pid_in, load, rows
from toolwire_client.config import RunConfig, RunLimits, ServerSpec
from toolwire_client.fleet.app import system_database_url
from toolwire_client.fleet.submit import FleetClient, submit
from toolwire_client.mistakes import WAITING
from toolwire_client.store import SqlRunStore, open_store
from toolwire_client.strategies.delegation import Delegation
from toolwire_client.tools.delegate import child_run_id

pytestmark = pytest.mark.timeout(180)


DURABLE = ServerSpec(name="durable")
"""How a submitted run names the durable tools: the workers' servers file says how to start them."""


def durable_server(tools_db: Path, gate: Path) -> ServerSpec:
    return ServerSpec(
        name="durable",
        command=[sys.executable, "-m", "toolwire_server", "tests/store/durable_tools.py:registry", "--stdio"],
        env={"DURABLE_TEST_DB": str(tools_db), "DURABLE_GATE_DIR": str(gate)},
        cwd=str(REPO),
    )


async def submit_refund_and_note(store: SqlRunStore, db: str, tools_db: Path, gate: Path) -> str:
    """The durable tools' run (a note and a refund at once, then the answer), submitted to the fleet."""
    fleet = FleetClient(db)
    try:
        config = RunConfig(model="scripted:durable", servers=[DURABLE], limits=RunLimits(max_steps=6))
        return await submit(store, fleet, "Refund 5 USD on order A123 and leave a note", config)
    finally:
        fleet.close()


async def test_a_taken_over_leg_replays_its_steps_and_sends_nothing_twice(tmp_path: Path) -> None:
    db, tools_db, gate = str(tmp_path / "runs.db"), tmp_path / "tools.sqlite3", tmp_path / "gate"
    gate.mkdir()
    dbos_db = Path(system_database_url(db).removeprefix("sqlite:///"))
    (gate / "hold_send_note").touch()  # the note is written, then holds before it answers
    driver = (sys.executable, DRIVER, "cli")  # `toolwire` with the test's scripted model registered
    env = {"DURABLE_GATE_DIR": str(gate)}

    def worker(log: str) -> Worker:
        servers = [durable_server(tools_db, gate)]
        return start_worker(db, tmp_path / log, concurrency=1, command=driver, env_extra=env, servers=servers)

    first = worker("first.log")
    try:
        wait_until(lambda: started(first), "the first worker to take runs", timeout_s=60, interval_s=0.1)
        store = await open_store(db)
        run_id = await submit_refund_and_note(store, db, tools_db, gate)
        wait_until((gate / "send_note_started").exists, "the note to be in flight", timeout_s=60, interval_s=0.05)
        wait_until(lambda: bool(rows(tools_db, "SELECT COUNT(*) FROM refunds")[0][0]), "the refund's write")
        first.kill9()
        kill_pid_in(gate / "send_note_started")  # the dead worker's orphaned stdio server
    finally:
        first.stop()
    (gate / "hold_send_note").unlink()
    assert (gate / "model_calls").read_text().split() == ["1"]

    second = worker("second.log")
    log = tmp_path / "second.log"
    try:
        finished = cli(db, "wait", run_id, "--timeout", "90")
        state = await store.load(run_id)
    finally:
        second.stop()
        await store.aclose()

    assert finished.returncode == 0, finished.stdout + finished.stderr + log.read_text()
    assert state.status == "done", (state.status, state.report, log.read_text())
    assert "took over 1 run of dead worker" in log.read_text()  # the run's one leg
    assert f"run {run_id}: resumed from its saved state after 1 step(s)" in log.read_text()
    # the model answered turn 1 once (saved before its calls were sent), and was asked only for turn 2 afterwards
    assert (gate / "model_calls").read_text().split() == ["1", "2"]
    note, refund = state.steps[0].results
    assert note.name == "send_note" and note.is_error and "outcome" in note.content.lower(), note
    assert refund.name == "refund" and not refund.is_error, refund
    assert rows(tools_db, "SELECT COUNT(*) FROM notes")[0][0] == 1  # never sent again
    assert rows(tools_db, "SELECT COUNT(*) FROM refunds")[0][0] == 1  # sent again with its key, written once
    # the run store is the run's one record: DBOS keeps the leg's workflow, not a record per call or save
    assert rows(dbos_db, f"SELECT COUNT(*) FROM operation_outputs WHERE workflow_uuid = '{run_id}'")[0][0] == 0


async def test_a_sub_agents_approval_wakes_the_fleet_run_above_it(tmp_path: Path) -> None:
    db, tools_db, gate = str(tmp_path / "runs.db"), tmp_path / "tools.sqlite3", tmp_path / "gate"
    gate.mkdir()
    driver = (sys.executable, DRIVER, "cli")
    worker = start_worker(
        db, tmp_path / "worker.log", concurrency=1, command=driver, servers=[durable_server(tools_db, gate)]
    )
    store = await open_store(db)
    try:
        wait_until(lambda: started(worker), "the worker to take runs", timeout_s=60, interval_s=0.1)
        fleet = FleetClient(db)
        try:
            config = RunConfig(
                model="scripted:durable_delegates",
                servers=[DURABLE],
                limits=RunLimits(max_steps=6),
                risky_tools=["refund"],
                delegate=Delegation(),
            )
            run_id = await submit(store, fleet, "Refund 5 USD on order A123 and leave a note", config)
        finally:
            fleet.close()
        child = child_run_id(run_id, "call_delegate")
        waiting = cli(db, "wait", run_id, "--timeout", "60")
        assert waiting.returncode == WAITING, waiting.stdout + waiting.stderr
        assert (await store.load(child)).status == "waiting_for_approval"

        approved = cli(db, "approve", child, "call_refund")
        assert approved.returncode == 0, approved.stderr
        assert f"the worker fleet goes on with it (workflow {run_id})" in approved.stdout, approved.stdout
        finished = cli(db, "wait", run_id, "--timeout", "90")
        assert finished.returncode == 0, finished.stdout + finished.stderr + worker.log.read_text()
    finally:
        worker.stop()
        await store.aclose()
    assert (await load(db, child)).status == "done"
    assert rows(tools_db, "SELECT COUNT(*) FROM refunds")[0][0] == 1
    assert rows(tools_db, "SELECT COUNT(*) FROM notes")[0][0] == 1


async def test_a_worker_whose_event_loop_stalls_beats_on_and_keeps_its_run(tmp_path: Path) -> None:
    """The model blocks its worker's event loop for longer than a worker may be silent: the heartbeat (its own
    thread, loop and connection) goes on, so the other worker takes nothing over and nothing runs twice."""
    db, tools_db, gate = str(tmp_path / "runs.db"), tmp_path / "tools.sqlite3", tmp_path / "gate"
    gate.mkdir()
    driver = (sys.executable, DRIVER, "cli")
    env = {"DURABLE_GATE_DIR": str(gate), "DURABLE_HANG_STEP": "1"}  # turn 1 blocks until gate/release exists
    workers = [
        start_worker(
            db,
            tmp_path / f"w{i}.log",
            concurrency=1,
            command=driver,
            env_extra=env,
            servers=[durable_server(tools_db, gate)],
        )
        for i in range(2)
    ]
    store = await open_store(db)
    try:
        for w in workers:
            wait_until(lambda w=w: started(w), "the workers to take runs", timeout_s=60, interval_s=0.1)
        run_id = await submit_refund_and_note(store, db, tools_db, gate)
        wait_until((gate / "model_started").exists, "the model call to block its worker", timeout_s=60)
        stalled, since = int((gate / "model_started").read_text()), time.time()
        silent_s = float(FAST_TAKEOVER["TOOLWIRE_FLEET_DEAD_S"])

        def beat_of_stalled() -> float:
            with closing(sqlite3.connect(db)) as conn:  # sqlite3's own `with` commits, it does not close
                row = conn.execute("SELECT MAX(beat_at) FROM fleet_executors WHERE pid = ?", (stalled,)).fetchone()
            return float(row[0] or 0)

        wait_until(lambda: beat_of_stalled() > since + silent_s + 1, "the stalled worker to beat on", timeout_s=30)
        logs = "".join(w.log.read_text() for w in workers)
        assert "took over" not in logs, logs
        (gate / "release").touch()
        finished = cli(db, "wait", run_id, "--timeout", "60")
        assert finished.returncode == 0, finished.stdout + finished.stderr + logs
    finally:
        for w in workers:
            w.stop()
        await store.aclose()
    assert (gate / "model_calls").read_text().split() == ["1", "2"]  # no second execution asked the model again
    assert rows(tools_db, "SELECT COUNT(*) FROM refunds")[0][0] == 1
    assert rows(tools_db, "SELECT COUNT(*) FROM notes")[0][0] == 1
