"""One driver per run: the lease a process holds while it drives a run (`run`, `resume`, `demo`, `eval`, workers).

Taken before the run's first model call, renewed by a heartbeat that does not wait for step saves, and let go by
the run's last save (in the same write: `release` then writes nothing). Before each model call the driver checks
that its last renewal is recent (no one can have taken an unexpired lease); before each tool call the step save that
marks the calls `sent` is refused unless this owner still holds the lease. So no model call or tool call of one run
runs in two processes. A process cut off from the store stops renewing at half the TTL (its deadline), and only
after the whole TTL, by the database's clock, may another process take the run."""

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType

import anyio
from anyio.abc import TaskGroup

from toolwire_client.run import exits
from toolwire_client.run.state import RunState
from toolwire_client.store.base import RunStore
from toolwire_client.store.claims import LEASE_S, claim_owner
from toolwire_client.store.sql import RunNotFound

log = logging.getLogger("toolwire.client.lease")


class Lease:
    def __init__(self, store: RunStore, state: RunState, ttl_s: float = LEASE_S):
        self.store, self.state, self.ttl_s = store, state, ttl_s
        self.owner = claim_owner()
        self.renewed = 0.0
        self.lost: str | None = None
        self._group: TaskGroup | None = None

    async def __aenter__(self) -> "Lease":
        try:
            await self.store.claim(self.state.run_id, self.owner)
        except RunNotFound:  # a new run: on record first, then claimed (its id is new, so no one else can)
            await self.store.save(self.state)
            await self.store.claim(self.state.run_id, self.owner)
        self.renewed = time.monotonic()
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self._beat)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        assert self._group is not None
        self._group.cancel_scope.cancel()
        await self._group.__aexit__(None, None, None)
        if self.lost is None:
            with anyio.CancelScope(shield=True):
                try:
                    await self.store.release(self.state.run_id, self.owner)
                except Exception as exc:  # the run has ended: a store that refuses now must not hide how
                    log.warning(
                        "run %s: its lease was not released (%s); it is taken over once it runs out",
                        self.state.run_id,
                        exc,
                    )
        return None

    async def _beat(self) -> None:
        """Renew every quarter of the TTL until the lease is lost: taken over, or not renewed within half the TTL of
        the last renewal sent (the database then still has it ours for half a TTL more, so this process has stopped
        before anyone may take the run). Errors of a store cut off are tried again, never raised into the run."""
        while self.lost is None:
            await anyio.sleep(self.ttl_s / 4)
            await self._renew_in_time()

    async def _renew_in_time(self) -> None:
        while (left := self.renewed + self.ttl_s / 2 - time.monotonic()) > 0:
            sent = time.monotonic()
            with anyio.move_on_after(left):
                try:
                    if not await self.store.renew(self.state.run_id, self.owner):
                        self.lost = "another process took the run over"
                        return
                except Exception as exc:
                    log.warning("run %s: its lease was not renewed (%s); trying again", self.state.run_id, exc)
                    await anyio.sleep(min(1.0, self.ttl_s / 20))
                    continue
                self.renewed = sent
                return
        self.lost = f"its lease could not be renewed within {self.ttl_s / 2:g} s: the run store did not answer"
        log.warning("run %s: stopped driving it: %s", self.state.run_id, self.lost)

    def check(self) -> None:
        """Before a model call: stop unless this process surely still holds the lease."""
        if self.lost is None and time.monotonic() - self.renewed > self.ttl_s / 2:
            self.lost = f"its lease was not renewed for {time.monotonic() - self.renewed:.0f} s"
        if self.lost is not None:
            raise exits.NoLongerDriving(f"stopped: this process no longer drives the run ({self.lost})")

    def lose(self, why: str) -> exits.NoLongerDriving:
        self.lost = why
        return exits.NoLongerDriving(f"stopped: this process no longer drives the run ({why})")


@asynccontextmanager
async def held(store: RunStore | None, state: RunState, table: dict[str, Lease]) -> AsyncIterator[Lease | None]:
    """This process's lease on the run while it drives it, kept in `table` by run id (none without a store: a run
    nobody else can see needs none)."""
    if store is None:
        yield None
        return
    async with Lease(store, state) as lease:
        table[state.run_id] = lease
        try:
            yield lease
        finally:
            table.pop(state.run_id, None)
