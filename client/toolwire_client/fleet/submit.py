"""The client side of the fleet, no worker code needed: save a run and put it on the queue (`submit`), start the
next leg of a run whose calls were all decided (`notify`), and find the workflows behind a run."""

from pathlib import Path
from typing import Any

import anyio.to_thread

from toolwire_client.config import RunConfig, open_run
from toolwire_client.fleet.app import APP_NAME, is_postgres, leg_options, system_database_url
from toolwire_client.fleet.wake import wake
from toolwire_client.run.state import RunState
from toolwire_client.store import RunNotFound, SqlRunStore


class NotAFleetRun(LookupError):
    def __str__(self) -> str:
        return (
            f"run {self.args[0]} was not submitted to the worker fleet; `toolwire resume {self.args[0]}` runs it here"
        )


def new_state(task: str, config: RunConfig, run_id: str | None = None) -> RunState:
    """The run as Agent.run opens it (config.open_run), with its config saved, so a worker on any machine can
    rebuild it."""
    state = open_run(task, config, run_id=run_id)
    state.config = config.model_dump(mode="json")
    return state


def has_fleet(db: str | None) -> bool:
    """Whether a fleet ever used this run store (its DBOS system database exists), without creating anything."""
    url = system_database_url(db)
    if not is_postgres(db):
        return Path(url.removeprefix("sqlite:///")).exists()
    from toolwire_shared.persistence import Database

    database = Database(str(db))
    try:
        [(found,)] = database.execute("SELECT to_regclass('dbos.workflow_status')")
    finally:
        database.close()
    return found is not None


class FleetClient:
    """A DBOSClient on the fleet's system database (created first if no worker has started yet)."""

    def __init__(self, db: str | None) -> None:
        from dbos import DBOS, DBOSClient

        url = system_database_url(db)
        DBOS.migrate(url)  # a no-op once migrated; a client alone never creates the system database
        self.client = DBOSClient(system_database_url=url, application_name=APP_NAME)
        self.postgres = is_postgres(db)

    def close(self) -> None:
        self.client.destroy()

    def enqueue(self, run_id: str, workflow_id: str) -> str:
        options: Any = {**leg_options(workflow_id), "application_name": APP_NAME}
        self.client.enqueue(options, run_id)
        return workflow_id

    def legs(self, run_id: str) -> list[Any]:
        """The run's workflows: its first leg (id = run id) and those after a wait (RUN@VERSION)."""
        found = self.client.list_workflows(workflow_id_prefix=run_id, load_input=False)
        return [w for w in found if w.workflow_id == run_id or w.workflow_id.startswith(run_id + "@")]

    def cancel_live(self, run_id: str) -> None:
        """Cancel the run's legs that wait on the queue or are driven (fleet/cancel.py): none is started, recovered
        or taken over again."""
        for workflow in self.legs(run_id):
            if workflow.status in ("ENQUEUED", "PENDING"):
                self.client.cancel_workflow(workflow.workflow_id)


ENDED_BADLY = ("ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED")


def stuck(fleet: FleetClient, run_id: str) -> str | None:
    """Why no worker will drive the run on (its first leg's workflow, or its latest leg's, failed or was cancelled),
    or None."""
    legs = fleet.legs(run_id)
    run = [w for w in legs if w.workflow_id == run_id]
    last = max((w for w in legs if w.workflow_id != run_id), key=lambda w: w.created_at or 0, default=None)
    for workflow in [*run, *([last] if last else [])]:
        if workflow.status in ENDED_BADLY:
            error = f" ({workflow.error})" if workflow.error else ""
            return f"its fleet workflow {workflow.workflow_id} is {workflow.status}{error}"
    return None


def unclaimed(fleet: FleetClient, run_id: str) -> bool:
    """Whether the run's workflow still waits on the queue: no worker has taken it (DBOS's ENQUEUED; a worker's
    is PENDING)."""
    return any(w.workflow_id == run_id and w.status == "ENQUEUED" for w in fleet.legs(run_id))


async def submit(
    store: SqlRunStore, fleet: FleetClient, task: str, config: RunConfig, run_id: str | None = None
) -> str:
    """Save the run (so `toolwire runs` lists it at once) and enqueue its workflow under the run's id."""
    state = new_state(task, config, run_id)
    await store.save(state)
    await anyio.to_thread.run_sync(lambda: fleet.enqueue(state.run_id, state.run_id))
    return state.run_id


async def notify(store: SqlRunStore, fleet: FleetClient, run_id: str) -> str:
    """After a decision on top run `run_id`: its next leg enqueued once every call it waits on is decided
    (fleet/wake.py); the run's workflow id. A run never submitted is NotAFleetRun."""
    if not await anyio.to_thread.run_sync(lambda: fleet.legs(run_id)):
        raise NotAFleetRun(run_id)

    async def enqueue(run_id: str, workflow_id: str) -> None:
        await anyio.to_thread.run_sync(lambda: fleet.enqueue(run_id, workflow_id))

    await wake(store, await store.load(run_id), enqueue)
    return run_id


async def is_fleet_run(fleet: FleetClient, run_id: str) -> bool:
    return bool(await anyio.to_thread.run_sync(lambda: fleet.legs(run_id)))


__all__ = [
    "FleetClient",
    "NotAFleetRun",
    "RunNotFound",
    "is_fleet_run",
    "new_state",
    "notify",
    "stuck",
    "submit",
    "unclaimed",
]
