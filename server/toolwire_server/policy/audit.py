"""The audit trail: one append-only record per call that reached the server (who called what, a hash of the
arguments, and the arguments themselves only when configured, with secret fields redacted; how it ended, how long
it took, how large the answer was, the trace it belongs to, the replica that served it).

The call path only appends to a queue; a thread writes the queue in batches (every `flush_s`, or once `batch`
records wait) to SQLite or PostgreSQL, and the rest when the process stops cleanly (atexit, and the finaliser a
spawned `--workers` process runs). A batch whose write fails (the database away, a partition) goes back to the front
of the queue and the connection is opened anew for the next try, so what was queued is written once the database
answers again; past MAX_QUEUED held records, new ones are dropped, counted and said in the log. `read_records` is
what `toolwire audit` shows."""

import atexit
import contextlib
import functools
import hashlib
import json
import logging
import multiprocessing.util
import re
import threading
import time
from collections import deque
from typing import Any, NamedTuple

from toolwire_shared.persistence import Database, Migration, On, Schema

log = logging.getLogger("toolwire.server")

REDACTED = "[redacted]"
COLUMNS = (
    "at",
    "agent",
    "tool",
    "arguments_sha256",
    "arguments",
    "outcome",
    "latency_ms",
    "result_chars",
    "trace_id",
    "replica",
)
MIGRATIONS: list[Migration] = [
    (
        1,
        [
            """CREATE TABLE IF NOT EXISTS toolwire_audit (
                id {id}, at {float} NOT NULL, agent TEXT NOT NULL, tool TEXT NOT NULL,
                arguments_sha256 TEXT NOT NULL, arguments TEXT, outcome TEXT NOT NULL, latency_ms {float} NOT NULL,
                result_chars BIGINT NOT NULL, trace_id TEXT, replica TEXT NOT NULL)""",
            "CREATE INDEX IF NOT EXISTS toolwire_audit_at ON toolwire_audit (at)",
            On(
                "sqlite",
                """CREATE TRIGGER IF NOT EXISTS toolwire_audit_append_only BEFORE UPDATE ON toolwire_audit
                BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END""",
            ),
        ],
    ),
]
"""The audit table's versions (toolwire_audit_schema_version); append new migrations at the end, never edit one
that has shipped."""
SCHEMA = Schema("audit trail", "toolwire_audit_schema_version", MIGRATIONS, lock="toolwire.audit.migrations")
RETENTION_EVERY_S = 3600.0
MAX_QUEUED = 1_000_000
"""Records held while the database is away; beyond this, new ones are counted as dropped and said in the log, so an
unreachable database cannot take the server's memory."""
NAME_CHARS = 200
"""An agent's or tool's name is cut to this in a record (a name the caller made up may be long)."""


class AuditRecord(NamedTuple):
    """A row as it is inserted (a tuple: no conversion per record on the writer's side)."""

    at: float
    agent: str
    tool: str
    arguments_sha256: str
    arguments: str | None
    outcome: str
    """"ok", or the error kind of the result ("limited" for a call a limit refused)."""
    latency_ms: float
    result_chars: int
    trace_id: str | None
    replica: str


_SEPARATORS = re.compile(r"[\s_.-]+")


@functools.lru_cache(maxsize=4096)  # a tool's argument names come again and again: the call path looks them up
def field_key(name: str) -> str:
    """A key as `secret_fields` matches it, case and separators (`_`, `-`, `.`, space) aside: a client's `Password`,
    `PASSWORD`, `card-number` or `cardNumber` is the configured `password` or `card_number`."""
    return _SEPARATORS.sub("", name).casefold()


@functools.lru_cache(maxsize=32)
def _secret_keys(secret: frozenset[str]) -> frozenset[str]:
    return frozenset(field_key(name) for name in secret)


def redact(value: Any, secret: frozenset[str]) -> Any:
    """`value` with every dict key named in `secret` (at any depth; case and separators aside: `field_key`)
    replaced by REDACTED."""
    keys = _secret_keys(secret)
    return _redacted(value, keys) if keys else value


def _redacted(value: Any, keys: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: REDACTED if field_key(str(k)) in keys else _redacted(v, keys) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v, keys) for v in value]
    return value


def fingerprint(arguments: dict[str, Any] | None, secret: frozenset[str]) -> tuple[str, str]:
    """(sha256 of the redacted arguments as canonical JSON, that JSON). The hash is of the redacted form, so a
    low-entropy secret (a card number) cannot be found again by hashing guesses."""
    shown = json.dumps(redact(arguments or {}, secret), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(shown.encode()).hexdigest(), shown


class AuditLog:
    """The queue the call path appends to and the thread that writes it."""

    def __init__(self, database: str, *, batch: int = 500, flush_s: float = 0.5, retention_days: float = 30.0) -> None:
        self.database, self.batch, self.flush_s = database, batch, flush_s
        self.retention_s = retention_days * 86_400
        self._queue: deque[AuditRecord] = deque()
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._hooked = False
        self.written = 0
        self.dropped = 0

    def append(self, record: AuditRecord) -> None:
        if self._thread is None:
            self._start()
        if len(self._queue) >= MAX_QUEUED:
            self.dropped += 1
            if self.dropped in (1, 1000) or self.dropped % 100_000 == 0:
                log.error("audit: %d records dropped: the database has not taken any for a while", self.dropped)
            return
        self._queue.append(record)
        if len(self._queue) >= self.batch:
            self._wake.set()

    def _start(self) -> None:
        with self._start_lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._run, name="toolwire-audit", daemon=True)
            self._thread.start()
            if not self._hooked:  # the server's lifespan closes it; these are for a process that ends without one
                atexit.register(self.close)
                multiprocessing.util.Finalize(self, self.close, exitpriority=100)  # a spawned worker skips atexit
                self._hooked = True

    def close(self) -> None:
        """Write everything queued, then stop the thread; a later record starts it again."""
        with self._start_lock:
            thread = self._thread
            if thread is None:
                return
            self._stopping = True
            self._wake.set()
            thread.join(timeout=30)
            self._thread, self._stopping = None, False

    def _run(self) -> None:
        sink: _Sink | None = None  # opened when first needed, and again after a write that failed
        pruned = 0.0
        try:
            while True:
                self._wake.wait(self.flush_s)
                self._wake.clear()
                stopping = self._stopping
                while self._queue:
                    records = [self._queue.popleft() for _ in range(min(len(self._queue), self.batch))]
                    try:
                        sink = sink or _open(self.database)
                        if time.time() - pruned > RETENTION_EVERY_S:
                            sink.prune(time.time() - self.retention_s)
                            pruned = time.time()
                        sink.write(records)
                        self.written += len(records)
                    except Exception as exc:  # the database is away: keep the records, reconnect, try again
                        log.warning("audit: writing %d records failed (%s); will retry", len(records), exc)
                        self._queue.extendleft(reversed(records))
                        _close(sink)
                        sink = None
                        if stopping:
                            log.error("audit: %d records not written: the database is away at exit", len(self._queue))
                            return
                        time.sleep(min(self.flush_s * 4, 5.0))
                        break
                if stopping:
                    return
        finally:
            _close(sink)


def _close(sink: "_Sink | None") -> None:
    """Closes a sink whose connection may be broken already (a broken connection is never used again)."""
    if sink is not None:
        with contextlib.suppress(Exception):
            sink.close()


_INSERT = f"INSERT INTO toolwire_audit ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"


class _Sink:
    """The audit table of one database, written from the audit thread."""

    def __init__(self, database: str) -> None:
        self.db = Database(database)
        try:
            self.db.migrate(SCHEMA)
        except BaseException:
            self.db.close()
            raise

    def write(self, records: list[AuditRecord]) -> None:
        with self.db.transaction() as tx:
            tx.executemany(_INSERT, records)

    def prune(self, before: float) -> None:
        self.db.execute("DELETE FROM toolwire_audit WHERE at < ?", (before,))

    def close(self) -> None:
        self.db.close()


def _open(database: str) -> _Sink:
    return _Sink(database)


def read_records(
    database: str,
    *,
    agent: str | None = None,
    tool: str | None = None,
    outcome: str | None = None,
    since: float | None = None,
    limit: int = 1000,
) -> list[dict[str, Any]]:
    """The newest `limit` records matching every filter given, oldest first."""
    where: list[str] = ["1 = 1"]
    values: list[str | float] = []
    for column, value in (("agent", agent), ("tool", tool), ("outcome", outcome)):
        if value is not None:
            where.append(f"{column} = ?")
            values.append(value)
    if since is not None:
        where.append("at >= ?")
        values.append(since)
    query = (
        f"SELECT {', '.join(COLUMNS)} FROM toolwire_audit WHERE {' AND '.join(where)} ORDER BY at DESC, id DESC "
        f"LIMIT {int(limit)}"
    )
    db = Database(database, mode="ro")
    try:
        rows = db.execute(query, values)
    finally:
        db.close()
    return [dict(zip(COLUMNS, row, strict=True)) for row in reversed(rows)]
