"""The fleet at a glance, for the run console: how many workers beat within DEAD_S, and how many runs wait on the
queue for one. Nothing is created for a store no fleet ever used (has_fleet), so looking never makes a fleet."""

import time
from dataclasses import dataclass

import anyio.to_thread

from toolwire_client.fleet.app import QUEUE
from toolwire_client.fleet.heartbeat import DEAD_S
from toolwire_client.fleet.submit import FleetClient, has_fleet
from toolwire_client.fleet.tables import ensure_tables
from toolwire_client.store import SqlRunStore
from toolwire_client.store.sql import Tx


@dataclass(frozen=True)
class FleetInfo:
    workers_alive: list[str]
    """Executor ids (host-pid-random) whose heartbeat is younger than DEAD_S."""
    queued: int
    """Runs on the queue that no worker has taken yet."""


FRESH_S = 2.0
"""A read this young is answered again (every open page polls; the fleet's own tables are not read for each)."""


class FleetView:
    """Reads the fleet of one run store; the DBOS client is made once, on the first read that finds a fleet."""

    def __init__(self, db: str | None) -> None:
        self.db = db
        self.client: FleetClient | None = None
        self.last: tuple[float, FleetInfo | None] = (-FRESH_S, None)

    async def read(self, store: SqlRunStore) -> FleetInfo | None:
        at, info = self.last
        if time.monotonic() - at < FRESH_S:
            return info
        info = await self._read(store)
        self.last = (time.monotonic(), info)
        return info

    async def _read(self, store: SqlRunStore) -> FleetInfo | None:
        if self.client is None:
            if not await anyio.to_thread.run_sync(lambda: has_fleet(self.db)):
                return None
            self.client = await anyio.to_thread.run_sync(lambda: FleetClient(self.db))
            await ensure_tables(store)
        client = self.client

        def alive(tx: Tx) -> list[str]:
            rows = tx.execute(
                f"SELECT executor_id FROM fleet_executors WHERE beat_at >= {store.epoch_clock} - ?"
                " ORDER BY executor_id",
                (DEAD_S,),
            ).fetchall()
            return [str(r[0]) for r in rows]

        def queued() -> int:
            found = client.client.list_workflows(
                status="ENQUEUED", queue_name=QUEUE, load_input=False, load_output=False
            )
            return len(found)

        return FleetInfo(await store.transaction(alive), await anyio.to_thread.run_sync(queued))

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
