"""Scenario 4 of issue 38: PostgreSQL restarted (stopped at once, every connection cut) while three workers, each in
a network namespace of its own, drive runs of the support desk (half of them refunds that wait for a person's
approval). Checked from the records: every run ends `done`, every approved refund ran once and no other, no call
ran without its approval, and no worker failed a run. TOOLWIRE_CHAOS_RUNS sets the count (`make chaos`: 200)."""

import os
from pathlib import Path

import psycopg
import pytest
from fleet_procs import (
    FAST_TAKEOVER,
    Worker,
    decide_waiting,
    drive_all,
    refunds,
    start_worker,
    started,
    statuses,
    submit_runs,
    support_server,
)

from cluster.netns import Cluster
from helpers.cli import TOOLWIRE
from helpers.polling import await_until, wait_until
from toolwire_client.fleet.submit import FleetClient
from toolwire_client.store import SqlRunStore

pytestmark = [pytest.mark.postgres, pytest.mark.alone, pytest.mark.timeout(900)]

RUNS = int(os.environ.get("TOOLWIRE_CHAOS_RUNS", "24"))


WORKERS = 3
"""How many worker namespaces the cluster fixture (conftest.py) makes."""


def tampered(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT COUNT(*) FROM approval_events WHERE event = 'tampered'").fetchone()
    return int(row[0]) if row else 0


async def test_postgresql_restarted_while_three_workers_drive_runs(
    cluster: Cluster, store: SqlRunStore, tmp_path: Path
) -> None:
    env = {**FAST_TAKEOVER, "TOOLWIRE_DB_CONNECT_TIMEOUT_S": "2", "TOOLWIRE_DEBUG": "1"}
    support = [support_server(tmp_path)]
    workers: list[Worker] = []
    fleet = FleetClient(cluster.url)
    try:
        for n in (1, 2, 3):
            log, command = tmp_path / f"worker-{n}.log", (*cluster.in_worker(n), TOOLWIRE)
            url = cluster.worker_url(n)
            workers.append(start_worker(url, log, concurrency=4, command=command, env_extra=env, servers=support))
        for w in workers:
            wait_until(lambda w=w: started(w), "a worker to take runs", timeout_s=90, interval_s=0.1)
        planned = await submit_runs(store, fleet, tmp_path, RUNS)
        by_id = {p.run_id: p for p in planned}

        async def a_quarter_done() -> bool:
            await decide_waiting(store, fleet, by_id)
            return sum(s == "done" for s in (await statuses(store, list(by_id))).values()) >= RUNS // 4

        await await_until(a_quarter_done, "a quarter of the runs to end", timeout_s=300, interval_s=0.2)
        await store.aclose()  # the test's own connections die with the server too
        fleet.close()
        cluster.restart_postgres()
        fleet = FleetClient(cluster.url)
        await drive_all(store, fleet, planned, timeout_s=600)
        final = await statuses(store, list(by_id))
    finally:
        fleet.close()
        for w in workers:
            w.stop()
    logs = "".join(w.log.read_text() for w in workers)
    assert {r: s for r, s in final.items() if s != "done"} == {}, logs[-3000:]
    for p in planned:
        assert refunds(p.support_db) == (1 if p.approve else 0), p  # approved: once; else never
    assert tampered(cluster.url) == 0
    assert "could not be driven" not in logs
