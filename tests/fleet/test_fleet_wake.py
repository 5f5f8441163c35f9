"""A decision whose decider died before it could start the run's next leg (recorded in the run store, no leg
enqueued): a worker's sweep finds the run decided and enqueues the leg, and the run goes on, its refund made once.
A run waiting in the same store that was never submitted to the fleet is left for `toolwire resume`."""

from pathlib import Path

import pytest
from fleet_procs import refunds, start_worker, started, support_db, support_server, toolwire

from helpers.polling import wait_until
from toolwire_client.fleet.submit import FleetClient
from toolwire_client.mistakes import WAITING
from toolwire_client.run.state import PendingCall, RunState
from toolwire_client.store import approvals as decisions
from toolwire_client.store import open_store
from toolwire_shared.messages import ToolCall, UserMessage

pytestmark = pytest.mark.timeout(120)


async def test_a_decision_with_no_leg_enqueued_is_found_by_the_sweep(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    store = await open_store(db)
    local = RunState(
        run_id="run_local_waiting", agent_name="a", task="refund", model="m", messages=[UserMessage(content="x")],
        status="waiting_for_approval",
        pending=[
            PendingCall(call=ToolCall(id="call_1", name="issue_refund", arguments={}), state="approved", args_hash="h")
        ],
    )  # fmt: skip
    await store.save(local)  # decided, waiting for `toolwire resume`: not the fleet's to drive
    worker = start_worker(
        db, tmp_path / "worker.log", concurrency=2, servers=[support_server(tmp_path)],
        env_extra={"TOOLWIRE_FLEET_SWEEP_S": "0.5"},
    )  # fmt: skip
    try:
        wait_until(lambda: started(worker), "the worker to take runs", timeout_s=60, interval_s=0.1)
        submitted = toolwire(
            "submit", "Refund one item of order A123", "--model", "scripted:support_demo", "--server", "support",
            "--db", db,
        )  # fmt: skip
        run_id = submitted.stdout.strip()
        waiting = toolwire("wait", run_id, "--db", db, "--timeout", "60", timeout_s=90)
        assert waiting.returncode == WAITING, waiting.stdout + waiting.stderr
        await decisions.approve(store, run_id, None)  # recorded; its decider "dies" before it enqueues the leg
        finished = toolwire("wait", run_id, "--db", db, "--timeout", "60", timeout_s=90)
        log = worker.log.read_text()
    finally:
        worker.stop()
    try:
        assert finished.returncode == 0 and "Refunded one keyboard" in finished.stdout, finished.stdout + log
        assert f"run {run_id}: decided with no leg to go on; enqueued {run_id}@" in log, log
        assert refunds(support_db(tmp_path, run_id)) == 1
        # the sweep that woke the fleet run read every waiting run, the local one too, and left it alone
        assert (await store.load(local.run_id)).status == "waiting_for_approval"
        fleet = FleetClient(db)
        try:
            assert fleet.legs(local.run_id) == []
        finally:
            fleet.close()
    finally:
        await store.aclose()
