"""A worker goes on after PostgreSQL closes the connections DBOS pooled (a database restart, an idle timeout, a
pooler's recycling): the fleet's DBOS engine pings no connection before use (fleet/app.py), so the statement that
meets a closed one fails, SQLAlchemy drops the pool's connections, and DBOS runs the statement again on a new one
(its queue thread logs one warning and polls again)."""

import uuid
from pathlib import Path

import pytest
from fleet_procs import start_worker, started, support_server

from helpers.polling import await_until, wait_until
from helpers.postgres import end_sessions, fresh_database
from toolwire_client.config import RunConfig, RunLimits, ServerSpec
from toolwire_client.fleet.submit import FleetClient, submit
from toolwire_client.store import SqlRunStore

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(120)]

CONFIG = RunConfig(model="scripted:recovers", servers=[ServerSpec(name="support")], limits=RunLimits(max_steps=6))
TASK = "What does order A123 cost with GST?"


@pytest.fixture
def db(postgres_url: str) -> str:
    return fresh_database(postgres_url, f"fleet_{uuid.uuid4().hex[:12]}")


async def test_runs_end_after_postgres_closed_the_workers_dbos_connections(
    db: str, store: SqlRunStore, tmp_path: Path
) -> None:
    worker = start_worker(db, tmp_path / "worker.log", concurrency=2, servers=[support_server(tmp_path)])
    fleet = FleetClient(db)
    try:
        wait_until(lambda: started(worker), "the worker to take runs", timeout_s=60, interval_s=0.1)

        async def ends(run_id: str) -> bool:
            return (await store.load(run_id)).status in ("done", "stopped", "failed")

        before = await submit(store, fleet, TASK, CONFIG)
        await await_until(lambda: ends(before), "the first run to end", timeout_s=60, interval_s=0.1)
        assert end_sessions(db, "dbos_transact") > 0

        after = await submit(store, fleet, TASK, CONFIG)
        await await_until(lambda: ends(after), "the run after the close to end", timeout_s=60, interval_s=0.1)
        states = [await store.load(before), await store.load(after)]
    finally:
        fleet.close()
        worker.stop()
    assert [s.status for s in states] == ["done", "done"], [(s.status, s.report) for s in states]
    assert worker.proc.returncode == 0, worker.log.read_text()  # it stopped when told to, not on the closed ones
