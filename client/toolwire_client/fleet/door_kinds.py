"""Which kind of agent door serves a run store: one that drives its runs in its own process (`agent serve --a2a |
--ag-ui`), or a door of the worker fleet (`--fleet`: only the workers drive). Both on one store would each take the
other's runs for its own (a driving A2A door picks up every `running` task left without a live lease, the fleet
recovers the same runs), so the second to start is refused, naming the first. Doors of one kind may share a store.

Each door holds a row of its kind in the fleet's tables, held as a run's lease is (store/claims.py): its holder a
claim owner, stamped and judged by the database's clock, renewed every quarter of LEASE_S and deleted when the door
stops. A row not renewed for LEASE_S is dead, and so at once is one whose process of this pid space has exited (a
door killed -9): neither blocks a door of the other kind."""

import logging
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Literal

import anyio

from toolwire_client.fleet.tables import ensure_tables
from toolwire_client.store import SqlRunStore, open_store
from toolwire_client.store.claims import LEASE_S, claim_owner, holder_has_exited
from toolwire_client.store.sql import Tx

log = logging.getLogger("toolwire.client.fleet")

Kind = Literal["driving", "fleet"]
LOCK = "toolwire.fleet.doors"
"""Taken by a door starting: of two doors of two kinds starting at once, the second sees the first's row."""


class OtherKindOfDoor(Exception):
    """A live door of the other kind serves the store; the message names it and says what to do."""


def kind_of(fleet: bool) -> Kind:
    return "fleet" if fleet else "driving"


@asynccontextmanager
async def holding(db: str | None, kind: Kind, door: str) -> AsyncIterator[None]:
    """While the door serves: its row held (OtherKindOfDoor, before anything else, when the other kind holds one)."""
    store = await open_store(db, connections=1)
    try:
        await ensure_tables(store)
        holder = claim_owner()
        await store.transaction(lambda tx: _take(tx, store.epoch_clock, holder, kind, door))
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_renew, store, holder, kind, door)
                yield
                group.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await store.transaction(lambda tx: tx.execute("DELETE FROM fleet_doors WHERE holder = ?", (holder,)))
    finally:
        await store.aclose()


def _take(tx: Tx, clock: str, holder: str, kind: Kind, door: str) -> None:
    tx.lock(LOCK)
    tx.execute(f"DELETE FROM fleet_doors WHERE beat_at < {clock} - ?", (LEASE_S,))
    rows = tx.execute("SELECT holder, kind, door FROM fleet_doors WHERE kind <> ?", (kind,)).fetchall()
    for other, other_kind, other_door in rows:
        if holder_has_exited(str(other)):  # killed on this machine: its row is dead now, not in LEASE_S
            tx.execute("DELETE FROM fleet_doors WHERE holder = ?", (other,))
            continue
        raise OtherKindOfDoor(_refusal(kind, str(other_kind), str(other_door), str(other)))
    _write(tx, clock, holder, kind, door)


def _write(tx: Tx, clock: str, holder: str, kind: Kind, door: str) -> None:
    tx.execute(
        f"INSERT INTO fleet_doors (holder, kind, door, beat_at) VALUES (?, ?, ?, {clock})"
        " ON CONFLICT (holder) DO UPDATE SET beat_at = excluded.beat_at",
        (holder, kind, door),
    )


async def _renew(store: SqlRunStore, holder: str, kind: Kind, door: str) -> None:
    """Every quarter LEASE_S, until cancelled; a store that does not answer is tried again at the next."""
    while True:
        await anyio.sleep(LEASE_S / 4)
        try:
            await store.transaction(lambda tx: _write(tx, store.epoch_clock, holder, kind, door))
        except Exception as exc:
            if not store.is_unreachable(exc):
                raise
            log.warning("%s: the run store does not answer the door's renewal: %s", door, exc)


def _refusal(kind: Kind, other_kind: str, other_door: str, other: str) -> str:
    host, _, rest = other.partition(":")
    pid = rest.partition(":")[0]
    where = f"pid {pid}" + ("" if host == socket.gethostname() else f" on {host}")
    drives = "drives its runs itself" if other_kind == "driving" else "leaves its runs to the worker fleet (--fleet)"
    this = "a door of the worker fleet (--fleet)" if kind == "fleet" else "a door that drives its runs (no --fleet)"
    return (
        f"{other_door} ({where}) serves this run store and {drives}; {this} beside it would take its runs for its "
        f"own. Stop it, or serve this agent {'with' if other_kind == 'fleet' else 'without'} --fleet as it does"
    )
