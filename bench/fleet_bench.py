"""The worker fleet on a PostgreSQL this script starts: runs per second with 1 and with 3 `toolwire worker`
processes (scripted GST runs on the real support tool server over stdio, no approvals), the takeover time after one
worker is killed -9 (default heartbeat settings), and the database writes per loop step (rows inserted, updated or
deleted per table, from pg_stat_user_tables, over the 3-worker batch).

`python -m bench.fleet_bench [N]` (default N=24 runs per batch) prints the figures.
"""

import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fleet"))

import fleet_procs

from helpers.polling import await_until, wait_until
from helpers.postgres import fresh_database, start_postgres, stop_postgres
from toolwire_client.fleet.submit import FleetClient
from toolwire_client.store import open_store


def table_writes(db: str) -> dict[str, int]:
    with psycopg.connect(db, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_force_next_flush()")
        rows = conn.execute(
            "SELECT schemaname || '.' || relname, n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_user_tables"
        ).fetchall()
    return {r[0]: int(r[1]) for r in rows}


async def batch(db: str, tmp: Path, workers: int, n: int, kill_one: bool = False) -> dict[str, Any]:
    """n runs on `workers` workers (4 runs at once each); with `kill_one`, the default heartbeat settings and the
    first worker killed -9 once it drives runs, and the takeover time measured."""
    procs = [fleet_procs.start_worker(db, tmp / f"w{workers}-{i}.log", fast_takeover=False) for i in range(workers)]
    try:
        for w in procs:
            wait_until(lambda w=w: fleet_procs.started(w), "a worker", timeout_s=60, interval_s=0.1)
        store = await open_store(db)
        fleet = FleetClient(db)
        result: dict[str, Any] = {"runs": n}
        try:
            before = table_writes(db)
            planned = await fleet_procs.submit_runs(store, fleet, tmp / f"b{workers}", n, refunds_every=n + 1)
            began = time.monotonic()
            if kill_one:
                victim = procs[0]
                in_flight = await await_until(
                    lambda: fleet_procs.pending_of(db, victim.proc.pid), "a busy worker", interval_s=0.05
                )
                victim.kill9()
                killed_at = time.time()
                await fleet_procs.drive_all(store, fleet, planned, timeout_s=600)
                taken = fleet_procs.restarted(db, in_flight, victim.proc.pid)
                result["in_flight"] = len(in_flight)
                result["takeover_s"] = max(at for _, at in taken) - killed_at if taken else None
                return result
            result["drive_s"] = await fleet_procs.drive_all(store, fleet, planned, timeout_s=600)
            result["submit_and_drive_s"] = time.monotonic() - began
            result["steps"] = sum([len((await store.load(p.run_id)).steps) for p in planned])
        finally:
            fleet.close()
            await store.aclose()
    finally:
        for w in procs:
            w.stop()
    if not kill_one:  # read once the workers' backends have ended: a backend flushes its statistics as it exits
        await anyio.sleep(1.0)
        after = table_writes(db)
        result["writes"] = {t: after[t] - before.get(t, 0) for t in after if after[t] != before.get(t, 0)}
    return result


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 24
    root = Path(tempfile.mkdtemp(prefix="toolwire-pg-bench-"))
    base = start_postgres(root)
    try:
        for workers in (1, 3):
            db = fresh_database(base, f"bench_{uuid.uuid4().hex[:8]}")
            tmp = Path(tempfile.mkdtemp(prefix="fleet-bench-"))
            result = anyio.run(batch, db, tmp, workers, n)
            rate = result["runs"] / result["drive_s"]
            print(f"{workers} worker(s) x 4: {result['runs']} runs in {result['drive_s']:.1f} s = {rate:.2f} runs/s")
            if workers == 3:
                steps = result["steps"]
                print(f"  {steps} loop steps; rows written per step by table:")
                for table, count in sorted(result["writes"].items()):
                    print(f"    {table}: {count} ({count / steps:.2f} per step)")
        db = fresh_database(base, f"bench_{uuid.uuid4().hex[:8]}")
        killed = anyio.run(batch, db, Path(tempfile.mkdtemp(prefix="fleet-bench-")), 3, n, True)
        print(
            f"kill -9 of a worker driving {killed['in_flight']} runs (heartbeat 1 s, dead after 5 s): all restarted "
            f"on other workers {killed['takeover_s']:.1f} s after the kill"
        )
    finally:
        stop_postgres(root)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
