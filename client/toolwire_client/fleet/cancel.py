"""A run stopped because someone cancelled it (an A2A client's tasks/cancel), wherever it is driven: the one way a
run is ended `stopped`/`canceled` under its lease (`end_under_lease`), and the cancel of a fleet run (`cancel`):
its legs' workflows cancelled in DBOS, so no worker starts, recovers or takes one over, then the run ended here once
no live lease holds it. The worker driving it sees its workflow cancelled within CANCEL_POLL_S (fleet/workflow.py),
stops driving and ends it itself."""

import os

import anyio
import anyio.to_thread

from toolwire_client.calls import answer_the_rest
from toolwire_client.fleet.submit import FleetClient
from toolwire_client.run import exits
from toolwire_client.store import RunAlreadyClaimed, SqlRunStore
from toolwire_client.store.checkpoint import save_last
from toolwire_client.store.lease import Lease

CANCELED = "canceled"
"""The stop reason of a run someone cancelled: the one stopped run whose A2A task is canceled."""
CANCEL_POLL_S = float(os.environ.get("TOOLWIRE_FLEET_CANCEL_POLL_S", "2"))
"""How often a worker asks DBOS whether the leg it drives was cancelled; how often a cancel looks whether the
worker has let the run go."""
ENDS_S = 60.0
"""How long a cancel waits for the worker driving the run to let it go; after that the run ends by itself on
the worker (its workflow cancelled), and the cancel answers with the run as it is."""


class Canceled(exits.RunExit, code=CANCELED):
    """Someone cancelled the run (an A2A client's tasks/cancel)."""


async def end_under_lease(store: SqlRunStore, run_id: str, exit_: exits.RunExit, only_running: bool = False) -> None:
    """End the run with `exit_` under its lease: every call of its last turn answered (a sent one: outcome unknown).
    A run that has ended meanwhile keeps its end; with `only_running`, so does one that waits for a person.
    RunAlreadyClaimed while another live process holds it."""
    state = await store.load(run_id)
    async with Lease(store, state) as lease:
        state = await store.load(run_id)  # as saved when the lease was taken
        drivable = ("running",) if only_running else ("running", "waiting_for_approval")
        if state.status not in drivable:
            return
        if state.steps:
            answer_the_rest(state, state.steps[-1], exit_.why)
        state.pending = []
        exits.finish(state, exit_)
        await save_last(store, state, lease)


async def cancel(store: SqlRunStore, fleet: FleetClient, run_id: str, why: str) -> None:
    """Cancel fleet run `run_id`: every live leg cancelled in DBOS, then the run ended `stopped`/`canceled` here as
    soon as no worker holds it (the worker driving it ends it itself first, as a rule); a leg a decision enqueued
    meanwhile is cancelled too. Gives up waiting after ENDS_S (the worker still ends it)."""
    with anyio.move_on_after(ENDS_S):
        while True:
            await anyio.to_thread.run_sync(lambda: fleet.cancel_live(run_id))
            if (await store.load(run_id)).status not in ("running", "waiting_for_approval"):
                return
            try:
                await end_under_lease(store, run_id, Canceled(why))
                return
            except RunAlreadyClaimed:
                await anyio.sleep(CANCEL_POLL_S / 4)
