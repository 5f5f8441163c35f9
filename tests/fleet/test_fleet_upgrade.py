"""A leg left on the queue by the fleet before this one (a `toolwire-leg` workflow on queue `toolwire-legs`, as the
two-workflow fleet enqueued them) is taken by a worker of this one and driven from the run store to its end."""

from pathlib import Path

import pytest
from fleet_procs import start_worker, started, support_server, toolwire

from helpers.polling import wait_until
from toolwire_client.config import RunConfig, RunLimits, ServerSpec
from toolwire_client.fleet.app import APP_NAME, APP_VERSION, OLD_LEG_WORKFLOW, OLD_QUEUE
from toolwire_client.fleet.submit import FleetClient, new_state
from toolwire_client.store import open_store

pytestmark = pytest.mark.timeout(120)


async def test_a_leg_left_on_the_old_legs_queue_is_driven(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    store = await open_store(db)
    config = RunConfig(model="scripted:recovers", servers=[ServerSpec(name="support")], limits=RunLimits(max_steps=6))
    state = new_state("What does order A123 cost with GST?", config)
    await store.save(state)
    await store.aclose()
    fleet = FleetClient(db)
    try:
        options = {
            "workflow_name": OLD_LEG_WORKFLOW,
            "queue_name": OLD_QUEUE,
            "workflow_id": f"{state.run_id}@1",
            "app_version": APP_VERSION,
            "application_name": APP_NAME,
        }
        fleet.client.enqueue(options, state.run_id)  # type: ignore[arg-type]
    finally:
        fleet.close()
    worker = start_worker(db, tmp_path / "worker.log", concurrency=2, servers=[support_server(tmp_path)])
    try:
        wait_until(lambda: started(worker), "the worker to take runs", timeout_s=60, interval_s=0.1)
        done = toolwire("wait", state.run_id, "--db", db, "--timeout", "60", timeout_s=90)
    finally:
        worker.stop()
    assert done.returncode == 0 and "5900.0 rupees" in done.stdout, done.stdout + done.stderr
