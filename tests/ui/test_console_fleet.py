"""The runs list's line about the worker fleet, against `toolwire ui` and a real `toolwire worker` on one SQLite
run store: runs submitted before any worker are counted as queued with no worker alive; once a worker starts, the
line names it (its executor id: host-pid-random) and the queue drains."""

import re
import socket
from pathlib import Path

import anyio
import httpx2
from console import console

from fleet.fleet_procs import start_worker, started, support_server
from helpers.polling import wait_until
from toolwire_client.config import RunConfig, RunLimits, ServerSpec
from toolwire_client.fleet.submit import FleetClient, submit
from toolwire_client.store import open_store


def submitted(db: str, n: int) -> list[str]:
    """`n` GST questions on the support tools (no risky call: each ends by itself), on the fleet's queue."""
    config = RunConfig(model="scripted:recovers", servers=[ServerSpec(name="support")], limits=RunLimits(max_steps=6))

    async def main() -> list[str]:
        store, fleet = await open_store(db), FleetClient(db)
        try:
            return [await submit(store, fleet, "What does order A123 cost with GST?", config) for _ in range(n)]
        finally:
            fleet.close()
            await store.aclose()

    return anyio.run(main)


def test_the_runs_list_shows_workers_alive_and_runs_queued(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    submitted(db, 2)
    with console(db, tmp_path) as url, httpx2.Client(base_url=url, timeout=30) as client:

        def fleet_line() -> str:
            found = re.search(r'<p id="fleet">(.*?)</p>', client.get("/").text)
            return found.group(1) if found else "(no fleet line)"

        assert fleet_line() == "fleet: 0 worker(s) alive (none); 2 run(s) queued for a worker"
        worker = start_worker(db, tmp_path / "worker.log", concurrency=2, servers=[support_server(tmp_path)])
        try:
            wait_until(lambda: started(worker), "the worker to take runs", timeout_s=60, interval_s=0.1)
            executor = f"{socket.gethostname()}-{worker.proc.pid}-"
            wait_until(
                lambda: "0 run(s) queued" in (line := fleet_line()) and f"1 worker(s) alive ({executor}" in line,
                "the fleet line to show the worker and an empty queue",
                timeout_s=30,
                interval_s=0.3,
            )
        finally:
            worker.stop()
