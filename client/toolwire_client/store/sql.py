"""The run store logic both back ends share: one row per run (state as JSON plus indexed columns), the decisions
table, optimistic versions, atomic claims and the approval cross-check. Subclasses supply the connection and dialect.

All SQL runs synchronously in a worker thread (anyio.to_thread), one transaction per operation, on a connection the
operation holds for its duration: a store opened with `connections=N` keeps up to N, so many runs in one process
(a fleet worker's) share a few connections instead of opening one each.
"""

import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, TypeVar

import anyio.to_thread

from toolwire_client.run.state import PendingCall, RunState, RunStatus, args_hash, now
from toolwire_client.store import layout
from toolwire_client.store.approval_rules import ApprovalEvent, NotApproved, Verdict, binding, verdict
from toolwire_client.store.approval_rules import decision as decision_of
from toolwire_client.store.base import (
    DecisionRecord,
    LeaseLost,
    Ruling,
    RunAlreadyClaimed,
    RunSummary,
    SaveRefused,
    StaleRunState,
)
from toolwire_client.store.claims import LEASE_S, holder_has_exited
from toolwire_client.store.schema import LATEST, MIGRATIONS
from toolwire_client.store.text_codec import (
    escape,
    escape_document,
    escape_opt,
    unescape,
    unescape_document,
    unescape_opt,
)
from toolwire_shared.messages import ToolCall

T = TypeVar("T")


class RunNotFound(KeyError):
    """No run with this id in the store."""

    def __str__(self) -> str:
        return f"no run '{self.args[0]}' in this store; `toolwire runs` lists the runs it holds"


class StoreMissing(Exception):
    """A command that reads saved runs (or decides on them) was pointed at a store that does not exist; it makes
    none: a mistyped --db would otherwise leave a new, empty store behind and report nothing to do."""

    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.where = where

    def __str__(self) -> str:
        return f"no run store at {self.where}: check --db or $TOOLWIRE_DB (`toolwire run` makes one)"


class ApprovalRefused(Exception):
    """A decision that would not be safe to record (fail closed): the reason says what was wrong."""


class SqlRunStore(ABC):
    """RunStore over a DB-API connection. `?` placeholders in the SQL below; subclasses translate if needed."""

    json_type = "TEXT"
    ts_type = "TEXT"
    for_update = ""
    clock = "strftime('%Y-%m-%dT%H:%M:%f000+00:00', 'now')"
    """The database's clock as a timestamp column holds it: every lease is stamped and judged by it, never by the
    clocks of the machines that drive runs (SQLite: the one machine's; its text sorts as Python's ISO stamps)."""
    epoch_clock = "((julianday('now') - 2440587.5) * 86400.0)"
    """The database's clock in seconds since the epoch (the fleet's heartbeats)."""

    def _older_than(self, column: str) -> str:
        """SQL true when `column` is more than `?` seconds behind the database's clock."""
        return f"{column} < strftime('%Y-%m-%dT%H:%M:%f000+00:00', 'now', '-' || ? || ' seconds')"

    def __init__(self, connections: int = 1) -> None:
        if connections < 1:
            raise ValueError(f"a run store needs at least one connection, not {connections}")
        self._size = connections
        self._slots = threading.BoundedSemaphore(connections)
        self._idle: list[Any] = []
        self._held = threading.local()
        self._token = object()
        """Whose note a state carries (layout.Written): this store's, or one it cannot trust."""
        self._create = True
        """False: open a store that exists, never make one (its file, folder or tables): StoreMissing instead."""

    @property
    def _conn(self) -> Any:
        """The connection the operation running in this thread holds."""
        return self._held.conn

    # -- dialect hooks -------------------------------------------------------------------------------------------
    @abstractmethod
    def _connect(self) -> Any: ...

    @abstractmethod
    def _transaction(self) -> AbstractContextManager[Any]:
        """A cursor inside one write transaction that commits on success and rolls back on error."""

    @abstractmethod
    def _lock_migrations(self, cur: Any) -> None: ...

    @abstractmethod
    def _has_schema(self, cur: Any) -> bool:
        """Whether the database holds a run store (its schema_version table)."""

    @abstractmethod
    def _where(self) -> str:
        """The store as a message names it (no password)."""

    def _sql(self, text: str) -> str:
        return text

    unreachable_errors: tuple[type[BaseException], ...] = ()
    """The database's errors that say it could not be reached or answer in time, not that it refused the write."""

    def is_unreachable(self, exc: BaseException) -> bool:
        """Whether `exc` (or what caused it, or one of its group) is the store being cut off or too slow: a driver
        tries again once it answers, where any other error is the run's own."""
        seen: set[int] = set()
        todo: list[BaseException | None] = [exc]
        while todo:
            e = todo.pop()
            if e is None or id(e) in seen:
                continue
            seen.add(id(e))
            if isinstance(e, self.unreachable_errors):
                return True
            todo += [e.__cause__, e.__context__, *(e.exceptions if isinstance(e, BaseExceptionGroup) else ())]
        return False

    def _ts_param(self, value: datetime | None) -> Any:
        return value.isoformat() if value is not None else None

    def _json_param(self, value: str) -> Any:
        return value

    def _json_value(self, value: Any) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(value) if isinstance(value, str | bytes) else value
        return loaded

    # -- the state as rows (layout.py), its text as both back ends can hold it (text_codec.py) -----------------
    def _split(self, state: RunState, version: int, stamp: datetime) -> layout.Split:
        return layout.split(state, self._token, version, stamp)

    def _header(self, parts: layout.Split) -> Any:
        """The `state` column's value: its strings escaped where they hold what a store cannot."""
        return self._json_param(escape_document(parts.header))

    def _append_log(self, cur: Any, run_id: str, parts: layout.Split, seq: int) -> None:
        """What settled since the last save, one row (after the run's own row: the log references it)."""
        if parts.segment is None:
            return
        if parts.replaces_log:
            self._execute(cur, "DELETE FROM run_log WHERE run_id = ?", (run_id,))
        body = self._json_param(escape_document(parts.segment))
        self._execute(cur, "INSERT INTO run_log (run_id, seq, body) VALUES (?, ?, ?)", (run_id, seq, body))

    def _read(self, cur: Any, run_id: str, lock: bool = False) -> tuple[RunState, str | None]:
        """The run's whole state (its header joined with its log) and who holds its lease; with `lock`, its row is
        held for this transaction."""
        row = self._execute(
            cur,
            f"SELECT state, version, claimed_by FROM runs WHERE run_id = ?{self.for_update if lock else ''}",
            (run_id,),
        ).fetchone()
        if row is None:
            raise RunNotFound(run_id)
        header = unescape_document(self._json_value(row[0]))
        segments = self._execute(cur, "SELECT body FROM run_log WHERE run_id = ? ORDER BY seq", (run_id,)).fetchall()
        document, messages, steps = layout.join(
            run_id, header, [unescape_document(self._json_value(s[0])) for s in segments]
        )
        state = RunState.model_validate(document)
        state.version = int(row[1])
        layout.note_loaded(state, self._token, messages, steps)
        return state, row[2]

    # -- tables beside the store's own ------------------------------------------------------------------------
    async def transaction(self, work: "Callable[[Tx], T]") -> T:
        """`work(tx)` in one transaction on the store's connection: how the fleet keeps its own small tables
        (heartbeats, model request counts) in the run store's database without reaching into its plumbing."""

        def run() -> T:
            with self._transaction() as cur:
                return work(Tx(self, cur))

        return await self._run(run)

    # -- plumbing ------------------------------------------------------------------------------------------------
    async def _run(self, fn: Callable[[], T], abandon_on_cancel: bool = False) -> T:
        def held() -> T:
            with self._slots:
                try:
                    conn = self._idle.pop()
                except IndexError:
                    conn = self._connect()
                self._held.conn = conn
                try:
                    return fn()
                finally:
                    self._held.conn = None
                    self._put_back(conn)

        return await anyio.to_thread.run_sync(held, abandon_on_cancel=abandon_on_cancel)

    def _put_back(self, conn: Any) -> None:
        """An idle connection for the next operation; one the server or the network closed is dropped."""
        if getattr(conn, "closed", False):
            return
        self._idle.append(conn)

    def _execute(self, cur: Any, sql: str, params: tuple[Any, ...] = ()) -> Any:
        cur.execute(self._sql(sql), params)
        return cur

    async def open(self, create: bool = True) -> "SqlRunStore":
        """Migrate the store to this toolwire's schema; with `create` False, only a store that exists already."""
        self._create = create
        await self._run(self._migrate)
        return self

    async def aclose(self) -> None:
        """Close every connection, once the operations under way have ended (a later operation connects again)."""

        def close() -> None:
            for _ in range(self._size):
                self._slots.acquire()
            try:
                while self._idle:
                    self._idle.pop().close()
            finally:
                for _ in range(self._size):
                    self._slots.release()

        await anyio.to_thread.run_sync(close)

    # -- schema --------------------------------------------------------------------------------------------------
    def _migrate(self) -> None:
        with self._transaction() as cur:
            self._lock_migrations(cur)
            if not self._create and not self._has_schema(cur):
                raise StoreMissing(self._where())
            self._execute(cur, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY)")
            current = self._execute(cur, "SELECT MAX(version) FROM schema_version").fetchone()[0] or 0
            if current > LATEST:
                raise RuntimeError(
                    f"this run store has schema version {current}, newer than this toolwire knows ({LATEST}); "
                    "upgrade toolwire"
                )
            for version, statements in MIGRATIONS:
                if version <= current:
                    continue
                for statement in statements:
                    self._execute(cur, statement.format(json=self.json_type, ts=self.ts_type))
                self._execute(cur, "INSERT INTO schema_version (version) VALUES (?)", (version,))

    async def schema_version(self) -> int:
        def read() -> int:
            with self._transaction() as cur:
                return int(self._execute(cur, "SELECT MAX(version) FROM schema_version").fetchone()[0] or 0)

        return await self._run(read)

    # -- RunStore ------------------------------------------------------------------------------------------------
    async def save(self, state: RunState, owner: str | None = None) -> None:
        await self._refused_as_data(state.run_id, lambda: self._save(state, owner))

    async def _refused_as_data(self, run_id: str, write: Callable[[], None]) -> None:
        """A write the database refused is SaveRefused; the store's own refusals (stale, lease, unknown run) stay."""
        try:
            await self._run(write)
        except (StaleRunState, RunNotFound):
            raise
        except Exception as exc:
            raise SaveRefused.of(run_id, exc) from exc

    def _save(self, state: RunState, owner: str | None = None) -> None:
        stamp = now()
        new_version = state.version + 1
        parts = self._split(state, new_version, stamp)
        with self._transaction() as cur:
            row = self._execute(
                cur, f"SELECT version, claimed_by FROM runs WHERE run_id = ?{self.for_update}", (state.run_id,)
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
                self._ts_param(state.started_at),
                self._ts_param(stamp),
                new_version,
                state.parent_run_id,
                escape_opt(state.parent_call_id),
                self._header(parts),
            )
            if stored is None:
                self._execute(
                    cur,
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
                    else f"claimed_at = CASE WHEN claimed_by IS NULL THEN NULL ELSE {self.clock} END"
                )
                fence = "" if owner is None else " AND claimed_by = ?"  # the lease, checked by the write itself
                written = self._execute(
                    cur,
                    "UPDATE runs SET agent_name = ?, task = ?, status = ?, steps = ?, tokens = ?, cost_usd = ?,"
                    " started_at = ?, updated_at = ?, version = ?, parent_run_id = ?, parent_call_id = ?, state = ?,"
                    f" {lease} WHERE run_id = ?{fence}",
                    (*columns, state.run_id, *(() if owner is None else (owner,))),
                ).rowcount
                if written != 1:
                    raise LeaseLost(f"run {state.run_id} is no longer driven by this process")
            self._append_log(cur, state.run_id, parts, new_version)
        state.version = new_version
        state.updated_at = stamp
        layout.note_saved(state, parts)

    async def save_end(self, state: RunState, owner: str | None = None) -> None:
        """The last resort when `save` of a run's end failed: the stored state (as last saved) with this one's status,
        stop reason and report, so the run is not left `running`. Same fences as `save` (version and lease)."""
        await self._refused_as_data(state.run_id, lambda: self._save_end(state, owner))

    def _save_end(self, state: RunState, owner: str | None) -> None:
        stamp = now()
        with self._transaction() as cur:
            stored, holder = self._read(cur, state.run_id, lock=True)
            if owner is not None and holder != owner:
                raise LeaseLost(f"run {state.run_id} is now driven by {holder or 'no one'}, not this process")
            if stored.version != state.version:
                raise StaleRunState(f"run {state.run_id} was saved by another process since this one's last save")
            stored.status, stored.stop_reason, stored.report = state.status, state.stop_reason, state.report
            parts = self._split(stored, state.version + 1, stamp)
            fence = "" if owner is None else " AND claimed_by = ?"
            written = self._execute(
                cur,
                f"UPDATE runs SET status = ?, updated_at = ?, version = ?, state = ? WHERE run_id = ?{fence}",
                (
                    state.status,
                    self._ts_param(stamp),
                    state.version + 1,
                    self._header(parts),
                    state.run_id,
                    *(() if owner is None else (owner,)),
                ),
            ).rowcount
            if written != 1:
                raise LeaseLost(f"run {state.run_id} is no longer driven by this process")
            self._append_log(cur, state.run_id, parts, state.version + 1)
        state.version += 1
        state.updated_at = stamp

    async def load(self, run_id: str) -> RunState:
        return await self._run(lambda: self._load(run_id))

    def _load(self, run_id: str) -> RunState:
        with self._transaction() as cur:
            return self._read(cur, run_id)[0]

    def _events(self, cur: Any, run_id: str, call_id: str) -> list[ApprovalEvent]:
        rows = self._execute(
            cur,
            "SELECT event, binding, reason FROM approval_events WHERE run_id = ? AND call_id = ?",
            (run_id, escape(call_id)),
        ).fetchall()
        return [ApprovalEvent(r[0], r[1], unescape_opt(r[2])) for r in rows]

    def _append_event(
        self, cur: Any, run_id: str, call: ToolCall, event: str, reason: str | None = None, by: str | None = None
    ) -> None:
        self._execute(
            cur,
            "INSERT INTO approval_events (run_id, call_id, tool, binding, event, reason, decided_by, at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                escape(call.id),
                escape(call.name),
                binding(run_id, call),
                event,
                escape_opt(reason),
                escape_opt(by),
                self._ts_param(now()),
            ),
        )

    async def decisions(self, run_id: str | None = None, limit: int = 200) -> list[DecisionRecord]:
        """The recorded decisions (who, what, why, when), of one run or of all, newest first."""

        def read() -> list[DecisionRecord]:
            where, params = (" AND run_id = ?", (run_id,)) if run_id else ("", ())
            with self._transaction() as cur:
                rows = self._execute(
                    cur,
                    "SELECT run_id, call_id, tool, event, decided_by, reason, at FROM approval_events"
                    f" WHERE event IN ('approve', 'reject'){where} ORDER BY at DESC LIMIT ?",
                    (*params, limit),
                ).fetchall()
            return [
                DecisionRecord(
                    run_id=r[0],
                    call_id=unescape(r[1]),
                    tool=unescape(r[2]),
                    decision=r[3],
                    decided_by=unescape_opt(r[4]),
                    reason=unescape_opt(r[5]),
                    at=r[6],
                )
                for r in rows
            ]

        return await self._run(read)

    async def list_runs(self, limit: int = 50, status: RunStatus | None = None) -> list[RunSummary]:
        def read() -> list[RunSummary]:
            where, params = ("WHERE status = ?", (status,)) if status else ("", ())
            with self._transaction() as cur:
                rows = self._execute(
                    cur,
                    "SELECT run_id, task, status, steps, tokens, cost_usd, started_at, updated_at, parent_run_id,"
                    " agent_name, claimed_by FROM runs "
                    f"{where} ORDER BY started_at DESC, run_id DESC LIMIT ?",
                    (*params, limit),
                ).fetchall()
            keys = (
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
            summaries = [RunSummary.model_validate(dict(zip(keys, r, strict=True))) for r in rows]
            for summary in summaries:
                summary.task = unescape(summary.task)
            return summaries

        return await self._run(read)

    async def claim(self, run_id: str, owner: str) -> None:
        await self._run(lambda: self._claim(run_id, owner))

    def _claim(self, run_id: str, owner: str) -> None:
        """Free, ours, or run out by the database's clock: taken in one statement (of two takers, one wins)."""
        with self._transaction() as cur:
            taken = self._execute(
                cur,
                f"UPDATE runs SET claimed_by = ?, claimed_at = {self.clock} WHERE run_id = ?"
                f" AND (claimed_by IS NULL OR claimed_by = ? OR {self._older_than('claimed_at')})",
                (owner, run_id, owner, LEASE_S),
            ).rowcount
            if taken == 1:
                return
            row = self._execute(cur, "SELECT claimed_by, claimed_at FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                raise RunNotFound(run_id)
            holder = row[0]
            if holder is not None and holder_has_exited(holder):
                # Compare-and-set on the exited holder: of two processes taking over, one wins.
                stolen = self._execute(
                    cur,
                    f"UPDATE runs SET claimed_by = ?, claimed_at = {self.clock} WHERE run_id = ? AND claimed_by = ?",
                    (owner, run_id, holder),
                ).rowcount
                if stolen == 1:
                    return
        raise RunAlreadyClaimed(
            f"run {run_id} is being driven by another process ({holder}, lease renewed at {str(row[1])[:19]}); wait "
            "for it to finish, or stop it: a stopped driver's run can be resumed at once from the same machine and "
            f"container, elsewhere {LEASE_S:g} s after its last lease renewal"
        )

    async def renew(self, run_id: str, owner: str) -> bool:
        """Cancellable at once (the lease gives up on a renewal the store does not answer in time: its thread is left
        to end on the connection's own timeouts)."""

        def renew() -> bool:
            with self._transaction() as cur:
                renewed = f"UPDATE runs SET claimed_at = {self.clock} WHERE run_id = ? AND claimed_by = ?"
                return bool(self._execute(cur, renewed, (run_id, owner)).rowcount)

        return await self._run(renew, abandon_on_cancel=True)

    async def release(self, run_id: str, owner: str) -> None:
        def release() -> None:
            with self._transaction() as cur:
                self._execute(
                    cur,
                    "UPDATE runs SET claimed_by = NULL, claimed_at = NULL WHERE run_id = ? AND claimed_by = ?",
                    (run_id, owner),
                )

        await self._run(release)

    # -- approvals -----------------------------------------------------------------------------------------------
    async def decide(self, run_id: str, call_id: str, ruling: Ruling) -> PendingCall:
        """Record a person's decision on one waiting call, and who made it, on the approval events and the saved
        state at once."""
        return await self._run(lambda: self._decide(run_id, call_id, ruling))

    def _decide(self, run_id: str, call_id: str, ruling: Ruling) -> PendingCall:
        def decide(tx: Tx, state: RunState, stamp: datetime) -> PendingCall:
            previous = decision_of(self._events(tx.cur, run_id, call_id))
            pending = _check_decidable(state, call_id, previous, ruling.shown_hash)
            pending.decide(ruling.decision, ruling.reason, ruling.by)
            return pending

        with self._transaction() as cur:
            pending = self.change_pending(Tx(self, cur), run_id, decide)
            self._append_event(cur, run_id, pending.call, ruling.decision, ruling.reason, ruling.by)
        return pending

    def change_pending(self, tx: "Tx", run_id: str, change: "PendingChange") -> PendingCall:
        """In `tx`: read the run (its row held), let `change` move one of its pending calls by a person's decision
        or answer (raising, it records nothing), and write the run back as its next version, header and log as a
        save writes them. Returns the call as changed."""
        cur, stamp = tx.cur, now()
        state = self._read(cur, run_id, lock=True)[0]
        version = state.version
        pending = change(tx, state, stamp)
        parts = self._split(state, version + 1, stamp)
        self._execute(
            cur,
            "UPDATE runs SET state = ?, version = ?, updated_at = ? WHERE run_id = ? AND version = ?",
            (self._header(parts), version + 1, self._ts_param(stamp), state.run_id, version),
        )
        self._append_log(cur, state.run_id, parts, version + 1)
        return pending

    async def authorize(self, run_id: str, call: ToolCall, idempotent: bool) -> Verdict:
        """At the moment a risky call is about to run: the verdict of the record (and a `use` appended when it runs),
        or NotApproved (and a `tampered` event appended) when no approval of exactly this call is on record."""
        return await self._run(lambda: self._authorize(run_id, call, idempotent))

    def _authorize(self, run_id: str, call: ToolCall, idempotent: bool) -> Verdict:
        problem: NotApproved | None = None
        with self._transaction() as cur:
            self._execute(cur, f"SELECT version FROM runs WHERE run_id = ?{self.for_update}", (run_id,))
            try:
                found = verdict(self._events(cur, run_id, call.id), binding(run_id, call), idempotent)
            except NotApproved as exc:
                problem = exc
                self._append_event(cur, run_id, call, "tampered", str(exc))
            else:
                if found == "run":
                    self._append_event(cur, run_id, call, "use")
        if problem is not None:
            raise problem
        return found

    async def flag_tampered(self, run_id: str, call: ToolCall, why: str) -> None:
        """Put on record that the saved run was changed around this call (`toolwire approvals` shows it)."""

        def flag() -> None:
            with self._transaction() as cur:
                self._append_event(cur, run_id, call, "tampered", why)

        await self._run(flag)

    async def tampered(self, limit: int = 200) -> list[tuple[str, str, str, str | None, Any]]:
        """Calls that a run was about to run with no approval on record: run id, call id, tool, why, when."""

        def read() -> list[tuple[str, str, str, str | None, Any]]:
            with self._transaction() as cur:
                rows = self._execute(
                    cur,
                    "SELECT run_id, call_id, tool, reason, at FROM approval_events WHERE event = 'tampered'"
                    " ORDER BY at DESC LIMIT ?",
                    (limit,),
                ).fetchall()
            return [(r[0], unescape(r[1]), unescape(r[2]), unescape_opt(r[3]), r[4]) for r in rows]

        return await self._run(read)

    async def waiting(self, limit: int = 200) -> list[RunState]:
        """Runs that wait for a person, newest first."""
        summaries = await self.list_runs(limit, status="waiting_for_approval")
        return [await self.load(s.run_id) for s in summaries]


class Tx:
    """One transaction of SqlRunStore.transaction: statements with `?` placeholders (made right for PostgreSQL),
    and the store's one advisory lock, for work that two processes must not do at once."""

    def __init__(self, store: SqlRunStore, cur: Any) -> None:
        self.store, self.cur = store, cur

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        return self.store._execute(self.cur, sql, params)

    def lock(self) -> None:
        self.store._lock_migrations(self.cur)

    def timestamp(self, at: datetime) -> Any:
        """`at` as this database takes a timestamp parameter."""
        return self.store._ts_param(at)


PendingChange = Callable[[Tx, RunState, datetime], PendingCall]
"""Moves one pending call of the run read for it (SqlRunStore.change_pending), at the time given; raises to refuse."""


def _check_decidable(
    state: RunState, call_id: str, previous: ApprovalEvent | None, shown_hash: str | None
) -> PendingCall:
    if previous is not None:  # first: once the run went on, the call is no longer pending, but it was decided
        raise ApprovalRefused(f"call '{call_id}' of run {state.run_id} was already decided ({previous.event})")
    match = [p for p in state.pending if p.call.id == call_id]
    if not match:
        asked = [p.call.id for p in state.pending if p.waits_for_approval]
        listing = ", ".join(asked) if asked else "none"
        raise ApprovalRefused(
            f"run {state.run_id} never asked for approval of call '{call_id}'; calls waiting: {listing}"
        )
    pending = match[0]
    if not pending.waits_for_approval:
        raise ApprovalRefused(f"call '{call_id}' of run {state.run_id} is not waiting for approval ({pending.state})")
    if args_hash(pending.call.arguments) != pending.args_hash:
        raise ApprovalRefused(
            f"the arguments of call '{call_id}' changed after approval was asked for; nothing was recorded"
        )
    if shown_hash is not None and not pending.args_hash.startswith(shown_hash):
        raise ApprovalRefused(
            f"call '{call_id}' has arguments hash {pending.args_hash[:12]}, not the {shown_hash} you were shown; "
            "look again with `toolwire approvals`"
        )
    return pending
