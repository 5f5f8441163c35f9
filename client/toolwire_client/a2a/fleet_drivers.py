"""The A2A door's drivers with the worker fleet (`agent serve --a2a --fleet`): the same face as drivers.Drivers,
but no run is driven in this process. A new task is submitted to the fleet (fleet/door.py), a decision has woken it
already (the door decides through fleet/decide.py), and tasks/cancel cancels the run's workflows and ends it."""

import logging

from anyio.abc import TaskGroup

from toolwire_client.config import RunConfig
from toolwire_client.fleet.cancel import end_under_lease
from toolwire_client.fleet.door import FleetDoor
from toolwire_client.mistakes import explain
from toolwire_client.run import exits
from toolwire_client.run.state import RunState
from toolwire_client.store import SqlRunStore

log = logging.getLogger("toolwire.a2a")


class FleetDrivers:
    def __init__(self, store: SqlRunStore, door: FleetDoor, group: TaskGroup) -> None:
        self.store, self.door, self.group = store, door, group
        self.config: RunConfig = door.config

    def driving(self, run_id: str) -> bool:
        """Always: the fleet drives every run of this door (the door never resumes or picks up one)."""
        return True

    def start(self, state: RunState) -> None:
        """Put the new run (saved by the door) on the fleet's queue; a run the queue would not take ends failed."""

        async def enqueue() -> None:
            try:
                await self.door.enqueue(state.run_id)
            except Exception as exc:
                said = explain(exc).message
                log.warning("run %s: not submitted to the fleet: %s", state.run_id, said)
                await end_under_lease(self.store, state.run_id, exits.HarnessFailed(f"not submitted: {said}"))

        self.group.start_soon(enqueue)

    def resume(self, run_id: str) -> None:
        """Nothing: a decision wakes the fleet as it is recorded (fleet/decide.py), and the workers sweep."""

    async def cancel(self, run_id: str) -> None:
        await self.door.cancel(run_id, "stopped: its A2A task was cancelled")
