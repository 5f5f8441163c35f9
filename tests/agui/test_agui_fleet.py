"""`agent serve --ag-ui --fleet`: a front end's thread is submitted to the worker fleet and driven by a real
`toolwire worker` (SQLite run store); the stream only reads the store, and the front end's resume of the approval
interrupt wakes the fleet (fleet/decide.py), whose next leg ends the run."""

import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from agui.agui_procs import people_file, run_input, stream
from fleet.fleet_procs import start_worker, started, support_db, support_server
from helpers.cli import REPO, TOOLWIRE, clean_env
from helpers.polling import wait_until
from helpers.servers import free_port, stop_process, wait_until_ok
from toolwire_client.fleet.submit import FleetClient

THREAD = "fleet-thread-1"
ALICE = "alice-token-0123456789"


@pytest.fixture
def door(tmp_path: Path) -> Iterator[str]:
    """A worker with the support desk, and the AG-UI door on the fleet (alice may run and decide its runs)."""
    db = str(tmp_path / "runs.db")
    worker = start_worker(db, tmp_path / "w1.log", servers=[support_server(tmp_path)])
    port, log = free_port(), tmp_path / "door.log"
    argv = [
        TOOLWIRE, "agent", "serve", "--ag-ui", "--fleet", "--model", "scripted:support_demo",
        "--fleet-server", "support", "--db", db, "--port", str(port),
        "--tokens", str(people_file(tmp_path, {"alice": (ALICE, ["agent"])})),
    ]  # fmt: skip
    with log.open("w") as out:
        proc = subprocess.Popen(argv, cwd=REPO, env=clean_env(), stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: started(worker), "the worker to start", timeout_s=60)
        url = f"http://127.0.0.1:{port}/ag-ui"
        wait_until_ok(url, proc, log, 60, "toolwire agent serve --ag-ui --fleet")
        yield url
    finally:
        stop_process(proc)
        worker.stop()


def test_a_thread_is_driven_by_a_worker_and_its_resume_wakes_the_fleet(door: str, tmp_path: Path) -> None:
    with httpx2.Client(timeout=60) as client:
        with stream(client, door, run_input(THREAD, "leg-1", "Refund one item of order A123"), ALICE) as first:
            asked = first.to_end()
        end = asked[-1]
        assert end.type.value == "RUN_FINISHED" and end.outcome.type == "interrupt", [e.type.value for e in asked]
        (waiting,) = end.outcome.interrupts
        assert waiting.reason == "approval" and waiting.metadata["tool"] == "issue_refund"
        resume = [{"interruptId": waiting.id, "status": "resolved", "payload": {"approved": True}}]
        with stream(client, door, run_input(THREAD, "leg-2", resume=resume), ALICE) as second:
            resumed = second.to_end()
    assert resumed[-1].outcome.type == "success" and resumed[-1].result["status"] == "done"
    text = "".join(e.delta for e in resumed if e.type.value == "TEXT_MESSAGE_CONTENT")
    assert "Refunded one" in text
    assert support_db(tmp_path, THREAD).exists()  # the worker's support server did the refund
    fleet = FleetClient(str(tmp_path / "runs.db"))
    try:
        legs = {w.workflow_id: w.status for w in fleet.legs(THREAD)}
    finally:
        fleet.close()
    woken = [leg for leg in legs if leg.startswith(THREAD + "@")]  # the leg the front end's resume enqueued
    assert legs[THREAD] == "SUCCESS" and len(woken) == 1 and legs[woken[0]] == "SUCCESS", legs
