"""A person's decision and what wakes the run after it: the one path `toolwire approve`/`reject` and the run console
(`toolwire ui`) both take. The decision is recorded by the store (store/approvals.py, fail closed); a run submitted
to the worker fleet goes on in its next leg once every call it waits on is decided; a local run is left for
`resume`."""

from collections.abc import Awaitable, Callable

import anyio.to_thread

from toolwire_client.run.state import PendingCall
from toolwire_client.store import SqlRunStore
from toolwire_client.store import approvals as decisions

Decide = Callable[[SqlRunStore], Awaitable[PendingCall]]


async def decide_and_wake(
    db: str | None, store: SqlRunStore, run_id: str, decide: Decide
) -> tuple[PendingCall, str | None]:
    """Record the decision (`decide`: approvals.approve or .reject on `store`), then wake the run's top run if the
    fleet drives it: the decided call, and the workflow told (None: not a fleet run)."""
    pending = await decide(store)
    return pending, await notified(db, store, await decisions.root_run(store, run_id))


async def notified(db: str | None, store: SqlRunStore, run_id: str) -> str | None:
    """The run's workflow id when `run_id` (a top run: a sub-agent's decision wakes its top run) is a fleet run (its
    next leg enqueued if nothing is left undecided), else None (nothing of the fleet is touched)."""
    from toolwire_client.fleet.submit import has_fleet

    if not await anyio.to_thread.run_sync(lambda: has_fleet(db)):
        return None
    from toolwire_client.fleet.submit import FleetClient, NotAFleetRun, notify

    fleet = await anyio.to_thread.run_sync(lambda: FleetClient(db))
    try:
        return await notify(store, fleet, run_id)
    except NotAFleetRun:
        return None
    finally:
        fleet.close()
