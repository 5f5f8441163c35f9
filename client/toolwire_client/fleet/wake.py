"""What makes a fleet run that waited for a person go on: once every call it waits on is decided (down through the
sub-agents a delegate call waits on), a leg `RUN@VERSION` is enqueued, named by the version the run was decided at,
so everyone who finds it decided enqueues the same leg, and DBOS starts it once. The decider enqueues it
(`toolwire approve` / `reject` / `answer`, the console: fleet/decide.py); a leg that ends waiting looks once more
(fleet/workflow.py); and each worker sweeps the waiting runs every SWEEP_S, for a decider that died between its
decision and the enqueue."""

import os
from collections.abc import Awaitable, Callable

import anyio

from toolwire_client.run.state import RunState
from toolwire_client.store import SqlRunStore
from toolwire_client.store.approvals import decided

Enqueue = Callable[[str, str], Awaitable[None]]
"""(run id, workflow id): put a leg of the run on the fleet's queue (a no-op for a workflow id DBOS knows)."""
IsFleetRun = Callable[[str], Awaitable[bool]]

SWEEP_S = float(os.environ.get("TOOLWIRE_FLEET_SWEEP_S", "60"))
SWEPT = 1000
"""Waiting runs read per sweep (the newest first): a fleet with more runs waiting for people than this is swept
only for the newest."""


def leg_id(run_id: str, version: int) -> str:
    return f"{run_id}@{version}"


async def wake(store: SqlRunStore, state: RunState, enqueue: Enqueue) -> str | None:
    """Enqueue the next leg of top run `state` (as just read) if it waits and every call it waits on is decided:
    its id, else None (it does not wait: a leg drives it; or a call is still undecided)."""
    if state.status != "waiting_for_approval" or not await decided(store, state):
        return None
    workflow_id = leg_id(state.run_id, state.version)
    await enqueue(state.run_id, workflow_id)
    return workflow_id


async def sweep(store: SqlRunStore, is_fleet_run: IsFleetRun, enqueue: Enqueue) -> list[str]:
    """One sweep: the legs enqueued for fleet runs found decided (a run waiting for `toolwire resume` is left)."""
    woken = []
    for state in await store.waiting(SWEPT):
        if state.parent_run_id is not None or not await decided(store, state):  # most are not: it asks no one
            continue
        if await is_fleet_run(state.run_id) and (workflow_id := await wake(store, state, enqueue)) is not None:
            woken.append(workflow_id)
    return woken


async def keep_sweeping(
    store: SqlRunStore, is_fleet_run: IsFleetRun, enqueue: Enqueue, say: Callable[[str], None]
) -> None:
    """A sweep the run store does not answer is skipped (the worker is cut off: the next sweep looks again)."""
    while True:
        await anyio.sleep(SWEEP_S)
        try:
            woken = await sweep(store, is_fleet_run, enqueue)
        except Exception as exc:
            if not store.is_unreachable(exc):
                raise
            say(f"warning: the sweep of waiting runs found the run store unreachable: {exc}")
            continue
        for workflow_id in woken:
            say(f"run {workflow_id.partition('@')[0]}: decided with no leg to go on; enqueued {workflow_id}")
