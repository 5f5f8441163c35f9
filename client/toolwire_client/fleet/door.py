"""What an agent door (`agent serve --a2a | --ag-ui --fleet`) does with the worker fleet: it drives no run itself.
A new task's run is saved and enqueued as `toolwire submit` does it (its servers only names of the workers' servers
file), a decision wakes the fleet through fleet/decide.py, a cancel goes through fleet/cancel.py, and the door only
reads the run store to answer."""

import anyio.to_thread

from toolwire_client.config import RunConfig
from toolwire_client.fleet import cancel
from toolwire_client.fleet.submit import FleetClient, submit
from toolwire_client.store import SqlRunStore


class NotForTheFleet(ValueError):
    """The served agent names a tool server by command or URL: a worker starts only its servers file's."""


def checked_for_the_fleet(config: RunConfig) -> RunConfig:
    """The config a door submits: each server a bare name the workers' servers file must hold (trusted_servers.py
    refuses any other), never a command, URL, environment or folder of the door's."""
    for spec in config.servers:
        if spec.command or spec.url:
            raise NotForTheFleet(
                f"tool server {spec.name}: a run submitted to the fleet names a server of the workers' servers file "
                "(--fleet-server NAME), never a command or a URL"
            )
    if not config.servers:
        raise NotForTheFleet("name at least one tool server of the workers' servers file: --fleet-server NAME")
    return config


class FleetDoor:
    """The door's client of the fleet (a DBOSClient on its system database), open while the door serves."""

    def __init__(self, db: str | None, store: SqlRunStore, config: RunConfig) -> None:
        self.db, self.store, self.config = db, store, checked_for_the_fleet(config)
        self.fleet: FleetClient | None = None

    async def open(self) -> "FleetDoor":
        db = self.db
        self.fleet = await anyio.to_thread.run_sync(lambda: FleetClient(db))
        return self

    def close(self) -> None:
        if self.fleet is not None:
            self.fleet.close()

    def _client(self) -> FleetClient:
        assert self.fleet is not None, "the door opens its fleet client before it serves"
        return self.fleet

    async def submit(self, run_id: str, task: str) -> str:
        """Save run `run_id` of `task` on the served agent and put it on the fleet's queue."""
        return await submit(self.store, self._client(), task, self.config, run_id)

    async def enqueue(self, run_id: str) -> None:
        """Put run `run_id`, saved already with the served agent's config, on the fleet's queue."""
        fleet = self._client()
        await anyio.to_thread.run_sync(lambda: fleet.enqueue(run_id, run_id))

    async def cancel(self, run_id: str, why: str) -> None:
        await cancel.cancel(self.store, self._client(), run_id, why)
