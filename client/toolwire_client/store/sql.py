"""The run store logic both back ends share: one row per run (state as JSON plus indexed columns), the decisions
table, optimistic versions, atomic claims and the approval cross-check. Subclasses supply the connection and dialect.

All SQL runs synchronously on one connection in a worker thread (anyio.to_thread), one transaction per operation.
"""

import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Literal, TypeVar

import anyio.to_thread

from toolwire_client.state import PendingCall, RunState, RunStatus, args_hash, now
from toolwire_client.store.base import RunAlreadyClaimed, RunSummary, StaleRunState
from toolwire_client.store.claims import claim_is_orphaned
from toolwire_client.store.schema import LATEST, MIGRATIONS

T = TypeVar("T")
Decision = Literal["approve", "reject"]
_OPEN_DECISION_STATES = ("pending_approval", "approved", "rejected")


class RunNotFound(KeyError):
    """No run with this id in the store."""

    def __str__(self) -> str:
        return f"no run '{self.args[0]}' in this store; `toolwire runs` lists the runs it holds"


class ApprovalRefused(Exception):
    """A decision that would not be safe to record (fail closed): the reason says what was wrong."""


class SqlRunStore(ABC):
    """RunStore over a DB-API connection. `?` placeholders in the SQL below; subclasses translate if needed."""

    json_type = "TEXT"
    ts_type = "TEXT"
    for_update = ""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn: Any = None

    # -- dialect hooks -------------------------------------------------------------------------------------------
    @abstractmethod
    def _connect(self) -> Any: ...

    @abstractmethod
    def _transaction(self) -> AbstractContextManager[Any]:
        """A cursor inside one write transaction that commits on success and rolls back on error."""

    @abstractmethod
    def _lock_migrations(self, cur: Any) -> None: ...

    def _sql(self, text: str) -> str:
        return text

    def _ts_param(self, value: datetime | None) -> Any:
        return value.isoformat() if value is not None else None

    def _json_param(self, value: str) -> Any:
        return value

    def _json_value(self, value: Any) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(value) if isinstance(value, str | bytes) else value
        return loaded

    # -- plumbing ------------------------------------------------------------------------------------------------
    async def _run(self, fn: Callable[[], T]) -> T:
        def locked() -> T:
            with self._lock:
                if self._conn is None:
                    self._conn = self._connect()
                return fn()

        return await anyio.to_thread.run_sync(locked)

    def _execute(self, cur: Any, sql: str, params: tuple[Any, ...] = ()) -> Any:
        cur.execute(self._sql(sql), params)
        return cur

    async def open(self) -> "SqlRunStore":
        await self._run(self._migrate)
        return self

    async def aclose(self) -> None:
        def close() -> None:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

        await anyio.to_thread.run_sync(lambda: self._with_lock(close))

    def _with_lock(self, fn: Callable[[], None]) -> None:
        with self._lock:
            fn()

    # -- schema --------------------------------------------------------------------------------------------------
    def _migrate(self) -> None:
        with self._transaction() as cur:
            self._lock_migrations(cur)
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
    async def save(self, state: RunState) -> None:
        await self._run(lambda: self._save(state))

    def _save(self, state: RunState) -> None:
        stamp = now()
        new_version = state.version + 1
        body = state.model_copy(update={"version": new_version, "updated_at": stamp}).model_dump_json()
        with self._transaction() as cur:
            row = self._execute(
                cur, f"SELECT version FROM runs WHERE run_id = ?{self.for_update}", (state.run_id,)
            ).fetchone()
            stored = None if row is None else int(row[0])
            if (stored is None and state.version != 0) or (stored is not None and stored != state.version):
                raise StaleRunState(
                    f"run {state.run_id} was saved by another process (stored version {stored}, ours "
                    f"{state.version}); load it again before saving"
                )
            columns = (
                state.agent_name,
                state.task,
                state.status,
                len(state.steps),
                state.usage.total_tokens,
                state.cost_usd,
                self._ts_param(state.started_at),
                self._ts_param(stamp),
                new_version,
                self._json_param(body),
            )
            if stored is None:
                self._execute(
                    cur,
                    "INSERT INTO runs (agent_name, task, status, steps, tokens, cost_usd, started_at, updated_at,"
                    " version, state, run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (*columns, state.run_id),
                )
            else:
                self._execute(
                    cur,
                    "UPDATE runs SET agent_name = ?, task = ?, status = ?, steps = ?, tokens = ?, cost_usd = ?,"
                    " started_at = ?, updated_at = ?, version = ?, state = ?,"
                    " claimed_at = CASE WHEN claimed_by IS NULL THEN NULL ELSE ? END WHERE run_id = ?",
                    (*columns, self._ts_param(stamp), state.run_id),
                )
            self._mark_used_decisions(cur, state, stamp)
        state.version = new_version
        state.updated_at = stamp

    def _mark_used_decisions(self, cur: Any, state: RunState, stamp: datetime) -> None:
        """A decision is used once the saved state no longer holds its call as waiting/approved/rejected."""
        still_open = {p.call.id for p in state.pending if p.state in _OPEN_DECISION_STATES}
        rows = self._execute(
            cur, "SELECT call_id FROM decisions WHERE run_id = ? AND used_at IS NULL", (state.run_id,)
        ).fetchall()
        for (call_id,) in rows:
            if call_id not in still_open:
                self._execute(
                    cur,
                    "UPDATE decisions SET used_at = ? WHERE run_id = ? AND call_id = ?",
                    (self._ts_param(stamp), state.run_id, call_id),
                )

    async def load(self, run_id: str) -> RunState:
        return await self._run(lambda: self._load(run_id))

    def _load(self, run_id: str) -> RunState:
        with self._transaction() as cur:
            row = self._execute(cur, "SELECT state, version FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                raise RunNotFound(run_id)
            state = RunState.model_validate(self._json_value(row[0]))
            state.version = int(row[1])
            decisions = self._decisions(cur, run_id)
        _void_unsafe_approvals(state, decisions)
        return state

    def _decisions(self, cur: Any, run_id: str) -> dict[str, tuple[str, str, Any]]:
        rows = self._execute(
            cur, "SELECT call_id, decision, args_hash, used_at FROM decisions WHERE run_id = ?", (run_id,)
        ).fetchall()
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    async def list_runs(self, limit: int = 50, status: RunStatus | None = None) -> list[RunSummary]:
        def read() -> list[RunSummary]:
            where, params = ("WHERE status = ?", (status,)) if status else ("", ())
            with self._transaction() as cur:
                rows = self._execute(
                    cur,
                    "SELECT run_id, task, status, steps, tokens, cost_usd, started_at, updated_at FROM runs "
                    f"{where} ORDER BY started_at DESC, run_id DESC LIMIT ?",
                    (*params, limit),
                ).fetchall()
            keys = ("run_id", "task", "status", "steps", "tokens", "cost_usd", "started_at", "updated_at")
            return [RunSummary.model_validate(dict(zip(keys, r, strict=True))) for r in rows]

        return await self._run(read)

    async def claim(self, run_id: str, owner: str) -> None:
        await self._run(lambda: self._claim(run_id, owner))

    def _claim(self, run_id: str, owner: str) -> None:
        stamp = self._ts_param(now())
        with self._transaction() as cur:
            taken = self._execute(
                cur,
                "UPDATE runs SET claimed_by = ?, claimed_at = ?"
                " WHERE run_id = ? AND (claimed_by IS NULL OR claimed_by = ?)",
                (owner, stamp, run_id, owner),
            ).rowcount
            if taken == 1:
                return
            row = self._execute(cur, "SELECT claimed_by, claimed_at FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                raise RunNotFound(run_id)
            holder = row[0]
            if holder is not None and claim_is_orphaned(holder, row[1]):
                # Compare-and-set on the dead holder: of two processes taking over, one wins.
                stolen = self._execute(
                    cur,
                    "UPDATE runs SET claimed_by = ?, claimed_at = ? WHERE run_id = ? AND claimed_by = ?",
                    (owner, stamp, run_id, holder),
                ).rowcount
                if stolen == 1:
                    return
        raise RunAlreadyClaimed(f"run {run_id} is already being resumed by {holder}")

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
    async def decide(
        self, run_id: str, call_id: str, decision: Decision, reason: str | None, shown_hash: str | None = None
    ) -> PendingCall:
        """Record a person's decision on one waiting call, on the decisions table and the saved state at once."""
        return await self._run(lambda: self._decide(run_id, call_id, decision, reason, shown_hash))

    def _decide(
        self, run_id: str, call_id: str, decision: Decision, reason: str | None, shown_hash: str | None
    ) -> PendingCall:
        stamp = now()
        with self._transaction() as cur:
            row = self._execute(
                cur, f"SELECT state, version FROM runs WHERE run_id = ?{self.for_update}", (run_id,)
            ).fetchone()
            if row is None:
                raise RunNotFound(run_id)
            state = RunState.model_validate(self._json_value(row[0]))
            version = int(row[1])
            previous = self._decisions(cur, run_id).get(call_id)
            pending = _check_decidable(state, call_id, previous, shown_hash)
            pending.state = "approved" if decision == "approve" else "rejected"
            pending.decision_reason = reason
            state.version = version + 1
            state.updated_at = stamp
            self._execute(
                cur,
                "UPDATE runs SET state = ?, version = ?, updated_at = ? WHERE run_id = ? AND version = ?",
                (self._json_param(state.model_dump_json()), version + 1, self._ts_param(stamp), run_id, version),
            )
            # A call back at pending_approval had its earlier decision voided: the new one replaces it.
            self._execute(cur, "DELETE FROM decisions WHERE run_id = ? AND call_id = ?", (run_id, call_id))
            self._execute(
                cur,
                "INSERT INTO decisions (run_id, call_id, args_hash, decision, reason, decided_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (run_id, call_id, pending.args_hash, decision, reason, self._ts_param(stamp)),
            )
        return pending

    async def waiting(self, limit: int = 200) -> list[RunState]:
        """Runs that wait for a person, newest first."""
        summaries = await self.list_runs(limit, status="waiting_for_approval")
        return [await self.load(s.run_id) for s in summaries]


def _check_decidable(
    state: RunState, call_id: str, previous: tuple[str, str, Any] | None, shown_hash: str | None
) -> PendingCall:
    match = [p for p in state.pending if p.call.id == call_id]
    if not match:
        asked = [p.call.id for p in state.pending if p.state == "pending_approval"]
        listing = ", ".join(asked) if asked else "none"
        raise ApprovalRefused(
            f"run {state.run_id} never asked for approval of call '{call_id}'; calls waiting: {listing}"
        )
    pending = match[0]
    if pending.state != "pending_approval":
        if previous is not None:
            used = " and a resume already used it" if previous[2] is not None else ""
            raise ApprovalRefused(f"call '{call_id}' of run {state.run_id} was already decided ({previous[0]}){used}")
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


def _void_unsafe_approvals(state: RunState, decisions: dict[str, tuple[str, str, Any]]) -> None:
    """Fail closed on load: an approved call runs only with an unused approval bound to exactly these arguments."""
    for pending in state.pending:
        if pending.state not in ("approved", "rejected"):
            continue
        decision = decisions.get(pending.call.id)
        expected = "approve" if pending.state == "approved" else "reject"
        problem = None
        if decision is None or decision[0] != expected:
            problem = "no matching decision was recorded for it"
        elif decision[2] is not None:
            problem = "its decision was already used by an earlier resume"
        elif decision[1] != pending.args_hash or args_hash(pending.call.arguments) != pending.args_hash:
            problem = "its arguments changed after the decision"
        if problem is not None and pending.state == "approved":
            pending.state = "pending_approval"
            pending.decision_reason = f"approval void: {problem}; approve it again if it is still wanted"
