"""The run store on SQL, SQLite or PostgreSQL alike: one row per run (its state's header as JSON plus indexed
columns) and its log (rows.py), the approval events (approval_log.py), optimistic versions and leases (leases.py).
The database, its dialect, pool and migrations are the persistence kit's (toolwire_shared.persistence).

All SQL runs synchronously in a worker thread, one transaction per operation, on a connection the operation holds
for its duration: a store opened with `connections=N` keeps up to N, so many runs in one process (a fleet worker's)
share a few connections instead of opening one each.
"""

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from toolwire_client.run.state import PendingCall, RunState, RunStatus, now
from toolwire_client.store import approval_log, layout, leases, rows
from toolwire_client.store.approval_log import ApprovalRefused, PendingChange
from toolwire_client.store.approval_rules import NotApproved, Verdict
from toolwire_client.store.base import DecisionRecord, LeaseLost, Ruling, RunSummary, SaveRefused, StaleRunState
from toolwire_client.store.rows import RunNotFound
from toolwire_client.store.schema import SCHEMA
from toolwire_client.store.text_codec import escape, escape_opt, unescape
from toolwire_shared.messages import ToolCall
from toolwire_shared.persistence import Database, Dialect, Tx

__all__ = ["ApprovalRefused", "PendingChange", "RunNotFound", "SqlRunStore", "StoreMissing", "Tx"]

T = TypeVar("T")


class StoreMissing(Exception):
    """A command that reads saved runs (or decides on them) was pointed at a store that does not exist; it makes
    none: a mistyped --db would otherwise leave a new, empty store behind and report nothing to do."""

    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.where = where

    def __str__(self) -> str:
        return f"no run store at {self.where}: check --db or $TOOLWIRE_DB (`toolwire run` makes one)"


_SUMMARY = (
    "run_id",
    "task",
    "status",
    "steps",
    "tokens",
    "cost_usd",
    "started_at",
    "updated_at",
    "parent_run_id",
    "agent_name",
    "claimed_by",
)


class SqlRunStore:
    """RunStore over the kit's Database: a SQLite file or a PostgreSQL URL."""

    def __init__(self, where: str | Path, connections: int = 1) -> None:
        self.db = Database(where, connections=connections, missing=StoreMissing)
        self._token = object()
        """Whose note a state carries (layout.Written): this store's, or one it cannot trust."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.db.where!r})"

    @property
    def dialect(self) -> Dialect:
        return self.db.dialect

    @property
    def epoch_clock(self) -> str:
        """The database's clock in seconds since the epoch (the fleet's heartbeats)."""
        return self.db.dialect.epoch_clock

    def is_unreachable(self, exc: BaseException) -> bool:
        """Whether `exc` is the store being cut off or too slow: a driver tries again once it answers, where any
        other error is the run's own."""
        return self.db.is_unreachable(exc)

    # -- the public transaction API: tables beside the store's own, and changes of a run by a person ------------
    async def transaction(self, work: Callable[[Tx], T]) -> T:
        """`work(tx)` in one transaction on the store's connection: how the fleet, the input answers and the late
        outcomes keep their rows in the run store's database without reaching into its plumbing."""
        return await self.db.atransaction(work)

    def read(self, tx: Tx, run_id: str, lock: bool = False) -> RunState:
        """The run as stored, in `tx` (with `lock`, its row held until `tx` ends)."""
        return rows.read(tx, self._token, run_id, lock)[0]

    def change_pending(self, tx: Tx, run_id: str, change: PendingChange) -> PendingCall:
        """In `tx`: read the run (its row held), let `change` move one of its pending calls by a person's decision
        or answer (raising, it records nothing), and write the run back as its next version. Returns the call."""
        return approval_log.change_pending(tx, self._token, run_id, change)

    # -- opening and closing -------------------------------------------------------------------------------------
    async def open(self, create: bool = True) -> "SqlRunStore":
        """Migrate the store to this toolwire's schema; with `create` False, only a store that exists already."""
        self.db.mode = "create" if create else "rw"

        def migrate(tx: Tx) -> None:
            if not create and not tx.has_table(SCHEMA.version_table):
                raise StoreMissing(self.db.where)
            SCHEMA.migrate(tx)

        await self.db.atransaction(migrate)
        return self

    async def aclose(self) -> None:
        """Close every connection, once the operations under way have ended (a later operation connects again)."""
        await self.db.aclose()

    async def schema_version(self) -> int:
        return await self.db.atransaction(SCHEMA.version)

    # -- RunStore ------------------------------------------------------------------------------------------------
    async def save(self, state: RunState, owner: str | None = None) -> None:
        await self._refused_as_data(state.run_id, lambda: self._save(state, owner))

    async def _refused_as_data(self, run_id: str, write: Callable[[], None]) -> None:
        """A write the database refused is SaveRefused; the store's own refusals (stale, lease, unknown run) stay."""
        try:
            await self.db.run(write)
        except (StaleRunState, RunNotFound):
            raise
        except Exception as exc:
            raise SaveRefused.of(run_id, exc) from exc

    def _save(self, state: RunState, owner: str | None = None) -> None:
        stamp = now()
        new_version = state.version + 1
        parts = layout.split(state, self._token, new_version, stamp)
        with self.db.transaction() as tx:
            row = tx.execute(
                f"SELECT version, claimed_by FROM runs WHERE run_id = ?{tx.dialect.for_update}", (state.run_id,)
            ).fetchone()
            stored = None if row is None else int(row[0])
            if owner is not None and row is not None and row[1] != owner:
                raise LeaseLost(f"run {state.run_id} is now driven by {row[1] or 'no one'}, not this process")
            if (stored is None and state.version != 0) or (stored is not None and stored != state.version):
                raise StaleRunState(
                    f"run {state.run_id} was saved by another process (stored version {stored}, ours "
                    f"{state.version}); load it again before saving"
                )
            columns = (
                escape(state.agent_name),
                escape(state.task),
                state.status,
                len(state.steps),
                state.usage.total_tokens,
                state.cost_usd,
                tx.timestamp(state.started_at),
                tx.timestamp(stamp),
                new_version,
                state.parent_run_id,
                escape_opt(state.parent_call_id),
                rows.header(tx, parts),
            )
            if stored is None:
                tx.execute(
                    "INSERT INTO runs (agent_name, task, status, steps, tokens, cost_usd, started_at, updated_at,"
                    " version, parent_run_id, parent_call_id, state, run_id)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (*columns, state.run_id),
                )
            else:
                ends = owner is not None and state.status != "running"  # its driver's last save: the lease goes too
                lease = (
                    "claimed_by = NULL, claimed_at = NULL"
                    if ends  # else a save renews the lease it is made under
                    else f"claimed_at = CASE WHEN claimed_by IS NULL THEN NULL ELSE {tx.dialect.clock} END"
                )
                fence = "" if owner is None else " AND claimed_by = ?"  # the lease, checked by the write itself
                written = tx.execute(
                    "UPDATE runs SET agent_name = ?, task = ?, status = ?, steps = ?, tokens = ?, cost_usd = ?,"
                    " started_at = ?, updated_at = ?, version = ?, parent_run_id = ?, parent_call_id = ?, state = ?,"
                    f" {lease} WHERE run_id = ?{fence}",
                    (*columns, state.run_id, *(() if owner is None else (owner,))),
                ).rowcount
                if written != 1:
                    raise LeaseLost(f"run {state.run_id} is no longer driven by this process")
            rows.append_log(tx, state.run_id, parts, new_version)
        state.version = new_version
        state.updated_at = stamp
        layout.note_saved(state, parts)

    async def save_end(self, state: RunState, owner: str | None = None) -> None:
        """The last resort when `save` of a run's end failed: the stored state (as last saved) with this one's status,
        stop reason and report, so the run is not left `running`. Same fences as `save` (version and lease)."""
        await self._refused_as_data(state.run_id, lambda: self._save_end(state, owner))

    def _save_end(self, state: RunState, owner: str | None) -> None:
        stamp = now()
        with self.db.transaction() as tx:
            stored, holder = rows.read(tx, self._token, state.run_id, lock=True)
            if owner is not None and holder != owner:
                raise LeaseLost(f"run {state.run_id} is now driven by {holder or 'no one'}, not this process")
            if stored.version != state.version:
                raise StaleRunState(f"run {state.run_id} was saved by another process since this one's last save")
            stored.status, stored.stop_reason, stored.report = state.status, state.stop_reason, state.report
            parts = layout.split(stored, self._token, state.version + 1, stamp)
            fence = "" if owner is None else " AND claimed_by = ?"
            written = tx.execute(
                f"UPDATE runs SET status = ?, updated_at = ?, version = ?, state = ? WHERE run_id = ?{fence}",
                (
                    state.status,
                    tx.timestamp(stamp),
                    state.version + 1,
                    rows.header(tx, parts),
                    state.run_id,
                    *(() if owner is None else (owner,)),
                ),
            ).rowcount
            if written != 1:
                raise LeaseLost(f"run {state.run_id} is no longer driven by this process")
            rows.append_log(tx, state.run_id, parts, state.version + 1)
        state.version += 1
        state.updated_at = stamp

    async def load(self, run_id: str) -> RunState:
        return await self.db.atransaction(lambda tx: self.read(tx, run_id))

    async def list_runs(self, limit: int = 50, status: RunStatus | None = None) -> list[RunSummary]:
        def read(tx: Tx) -> list[RunSummary]:
            where, params = ("WHERE status = ?", (status,)) if status else ("", ())
            found = tx.execute(
                f"SELECT {', '.join(_SUMMARY)} FROM runs {where} ORDER BY started_at DESC, run_id DESC LIMIT ?",
                (*params, limit),
            ).fetchall()
            summaries = [RunSummary.model_validate(dict(zip(_SUMMARY, r, strict=True))) for r in found]
            for summary in summaries:
                summary.task = unescape(summary.task)
            return summaries

        return await self.db.atransaction(read)

    async def children(self, run_id: str) -> dict[str, str]:
        """The runs `run_id` started (delegate's sub-agents, code mode's scripts), by the id of the call that started
        each: their parent link (indexed)."""

        def read(tx: Tx) -> dict[str, str]:
            found = tx.execute("SELECT parent_call_id, run_id FROM runs WHERE parent_run_id = ?", (run_id,))
            return {call_id: child for call_id, child in found.fetchall() if call_id is not None}

        return await self.db.atransaction(read)

    async def waiting(self, limit: int = 200) -> list[RunState]:
        """Runs that wait for a person, newest first."""
        summaries = await self.list_runs(limit, status="waiting_for_approval")
        return [await self.load(s.run_id) for s in summaries]

    # -- leases (leases.py) --------------------------------------------------------------------------------------
    async def claim(self, run_id: str, owner: str) -> None:
        await self.db.atransaction(lambda tx: leases.claim(tx, run_id, owner))

    async def renew(self, run_id: str, owner: str) -> bool:
        """Cancellable at once (the lease gives up on a renewal the store does not answer in time: its thread is left
        to end on the connection's own timeouts)."""

        def renew() -> bool:
            with self.db.transaction() as tx:
                return leases.renew(tx, run_id, owner)

        return await self.db.run(renew, abandon_on_cancel=True)

    async def release(self, run_id: str, owner: str) -> None:
        await self.db.atransaction(lambda tx: leases.release(tx, run_id, owner))

    # -- approvals (approval_log.py) -----------------------------------------------------------------------------
    async def decide(self, run_id: str, call_id: str, ruling: Ruling) -> PendingCall:
        """Record a person's decision on one waiting call, and who made it, on the approval events and the saved
        state at once."""
        return await self.db.atransaction(lambda tx: approval_log.decide(tx, self._token, run_id, call_id, ruling))

    async def authorize(self, run_id: str, call: ToolCall, idempotent: bool) -> Verdict:
        """At the moment a risky call is about to run: the verdict of the record (and a `use` appended when it runs),
        or NotApproved (and a `tampered` event appended) when no approval of exactly this call is on record."""
        found = await self.db.atransaction(lambda tx: approval_log.authorize(tx, run_id, call, idempotent))
        if isinstance(found, NotApproved):
            raise found
        return found

    async def flag_tampered(self, run_id: str, call: ToolCall, why: str) -> None:
        """Put on record that the saved run was changed around this call (`toolwire approvals` shows it)."""
        await self.db.atransaction(lambda tx: approval_log.append(tx, run_id, call, "tampered", why))

    async def decisions(self, run_id: str | None = None, limit: int = 200) -> list[DecisionRecord]:
        """The recorded decisions (who, what, why, when), of one run or of all, newest first."""
        return await self.db.atransaction(lambda tx: approval_log.decisions(tx, run_id, limit))

    async def tampered(self, limit: int = 200) -> list[tuple[str, str, str, str | None, Any]]:
        """Calls that a run was about to run with no approval on record: run id, call id, tool, why, when."""
        return await self.db.atransaction(lambda tx: approval_log.tampered(tx, limit))
