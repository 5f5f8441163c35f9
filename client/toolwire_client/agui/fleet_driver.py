"""The AG-UI endpoint's driver with the worker fleet (`agent serve --ag-ui --fleet`): the same face as
driver.Driver, but no run is driven in this process. A new thread is submitted to the fleet (fleet/door.py) under
the thread's id; a front end's resume has woken the fleet as it was recorded (resumes.py, through fleet/decide.py);
the stream only reads the store."""

import logging

import anyio
from anyio.abc import TaskGroup

from toolwire_client.fleet.door import FleetDoor
from toolwire_client.mistakes import explain

log = logging.getLogger("toolwire.agui")


class FleetDriver:
    def __init__(self, door: FleetDoor, group: TaskGroup) -> None:
        self.door, self.group = door, group
        self.driving: dict[str, anyio.Event] = {}
        """Run id -> set once it is saved and on the fleet's queue (a second request meanwhile starts nothing)."""
        self.failed: dict[str, str] = {}
        """Run id -> why it could not be submitted (one line)."""

    def start(self, run_id: str, task: str) -> None:
        self.driving[run_id] = submitted = anyio.Event()

        async def submit() -> None:
            try:
                await self.door.submit(run_id, task)
            except Exception as exc:
                self.failed[run_id] = f"not submitted to the fleet: {explain(exc).message}"
                log.warning("run %s: %s", run_id, self.failed[run_id])
            finally:
                submitted.set()
                del self.driving[run_id]

        self.group.start_soon(submit)

    def go_on(self, run_id: str) -> None:
        """Nothing: the decision woke the fleet as it was recorded, and the workers sweep for one that did not."""

    def trouble(self, run_id: str) -> str | None:
        return self.failed.get(run_id)
