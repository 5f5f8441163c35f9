"""Who is alive in the fleet: each worker writes a heartbeat row under its DBOS executor id, and every worker, on
each beat, hands the PENDING workflows of executors whose beat is older than DEAD_S back to the queue (DBOS's own
recovery for given executor ids), where a live worker takes them. Without DBOS's hosted control plane nothing else
notices that a worker is gone."""

import logging
import os
import socket
import threading
from collections.abc import Awaitable, Callable

import anyio

from toolwire_client.store import SqlRunStore, open_store
from toolwire_client.store.sql import Tx

log = logging.getLogger("toolwire.client.fleet")

BEAT_S = float(os.environ.get("TOOLWIRE_FLEET_BEAT_S", "1"))
DEAD_S = float(os.environ.get("TOOLWIRE_FLEET_DEAD_S", "5"))
"""A worker whose heartbeat is this old is dead: its runs are taken over. Its DBOS workflows go back on the queue
at once; a run's lease then fences the takeover (at once for an exited process of this pid space, else once the lease
has run out by the database's clock, half a TTL after its holder stopped driving), so a worker only thought dead
never drives a run beside its taker."""

Recover = Callable[[list[str]], int]
"""DBOS's recovery of the given executors' pending workflows (blocking): how many it put back."""


def new_executor_id() -> str:
    """A DBOS executor id per worker process: host, pid and a random part (a restarted pid is another worker)."""
    return f"{socket.gethostname()}-{os.getpid()}-{os.urandom(3).hex()}"


async def beat(store: SqlRunStore, executor_id: str) -> None:
    """A beat stamped by the database's clock, as it is judged: the workers' clocks never need to agree."""

    def write(tx: Tx) -> None:
        tx.execute(
            f"INSERT INTO fleet_executors (executor_id, host, pid, beat_at) VALUES (?, ?, ?, {store.epoch_clock})"
            " ON CONFLICT (executor_id) DO UPDATE SET beat_at = excluded.beat_at",
            (executor_id, socket.gethostname(), os.getpid()),
        )

    await store.transaction(write)


async def dead_executors(store: SqlRunStore, dead_s: float = DEAD_S) -> list[tuple[str, float]]:
    """(executor id, last beat) of every executor that has not beaten for `dead_s`."""

    def read(tx: Tx) -> list[tuple[str, float]]:
        rows = tx.execute(
            f"SELECT executor_id, beat_at FROM fleet_executors WHERE beat_at < {store.epoch_clock} - ?", (dead_s,)
        ).fetchall()
        return [(str(r[0]), float(r[1])) for r in rows]

    return await store.transaction(read)


async def forget(store: SqlRunStore, executor_id: str, beat_at: float) -> None:
    """Drop a dead executor's row once its workflows are back on the queue (unless it has beaten again since)."""

    def delete(tx: Tx) -> None:
        tx.execute("DELETE FROM fleet_executors WHERE executor_id = ? AND beat_at = ?", (executor_id, beat_at))

    await store.transaction(delete)


async def keep_beating(
    db: str | None, executor_id: str, recover: Recover, on_takeover: Callable[[str, int], None]
) -> None:
    """Until cancelled: this worker's beat and the takeover of dead executors, on a thread of their own with their
    own event loop and database connections. On the worker's loop they waited behind the runs it drives (its event
    loop, its store's connections): a live worker driving 50 runs beat late, and the others took its runs over."""
    stop, failure = threading.Event(), list[BaseException]()

    def main() -> None:
        try:
            anyio.run(_beat_until, stop, db, executor_id, recover, on_takeover)
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=main, name="toolwire-heartbeat", daemon=True)
    thread.start()
    try:
        await anyio.to_thread.run_sync(thread.join, abandon_on_cancel=True, limiter=anyio.CapacityLimiter(1))
    finally:
        stop.set()
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(thread.join, limiter=anyio.CapacityLimiter(1))
    if failure:
        raise failure[0]


async def _beat_until(
    stop: threading.Event, db: str | None, executor_id: str, recover: Recover, on_takeover: Callable[[str, int], None]
) -> None:
    """The beat and the takeover apart: a takeover of hundreds of runs takes seconds, and the beat goes on."""

    async def every_beat(job: Callable[[], Awaitable[None]]) -> None:
        """A beat or takeover the store did not answer is tried on the next beat (a worker cut off from the store
        for a while comes back, and its leases said it stopped driving long before)."""
        while not stop.is_set():
            try:
                await job()
            except Exception as exc:
                if not store.is_unreachable(exc):
                    raise
                log.warning("worker %s: the run store does not answer its heartbeat: %s", executor_id, exc)
            await anyio.to_thread.run_sync(stop.wait, BEAT_S)
        group.cancel_scope.cancel()

    async def take_over() -> None:
        """Recovery first, row last: a taker that dies in between leaves the row, and the next live worker recovers
        again (DBOS makes that a no-op for workflows already back on the queue). The takeover is said before the row
        goes, so a row gone means it was said."""
        for dead, beat_at in await dead_executors(store):
            if dead == executor_id:
                continue  # our own beat was late (a stalled process): we are evidently alive
            taken = await anyio.to_thread.run_sync(recover, [dead])
            on_takeover(dead, taken)
            await forget(store, dead, beat_at)

    store = await open_store(db, connections=2)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(every_beat, lambda: beat(store, executor_id))
            group.start_soon(every_beat, take_over)
    finally:
        await store.aclose()
