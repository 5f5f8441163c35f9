"""What differs between SQLite and PostgreSQL, in one place: column types, the database's clock, placeholders, how
a parameter is passed, how a write transaction begins, and which errors say the database could not be reached."""

import functools
import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any


def is_postgres(where: str) -> bool:
    return where.startswith(("postgresql://", "postgres://"))


class Dialect:
    """SQLite's: the base; PostgreSQL's overrides what differs."""

    name = "sqlite"
    json_type = "TEXT"
    ts_type = "TEXT"
    float_type = "REAL"
    id_type = "INTEGER PRIMARY KEY AUTOINCREMENT"
    """An id column the database numbers itself."""
    for_update = ""
    clock = "strftime('%Y-%m-%dT%H:%M:%f000+00:00', 'now')"
    """The database's clock as a timestamp column holds it: leases are stamped and judged by it, never by the
    clocks of the machines that drive runs (SQLite: the one machine's; its text sorts as Python's ISO stamps)."""
    epoch_clock = "((julianday('now') - 2440587.5) * 86400.0)"
    """The database's clock in seconds since the epoch (the fleet's heartbeats)."""

    def sql(self, text: str) -> str:
        """`text` with its `?` placeholders as the driver takes them (the one place they are rewritten)."""
        return text

    def older_than(self, column: str) -> str:
        """SQL true when `column` is more than `?` seconds behind the database's clock."""
        return f"{column} < strftime('%Y-%m-%dT%H:%M:%f000+00:00', 'now', '-' || ? || ' seconds')"

    def timestamp(self, value: datetime | None) -> Any:
        return value.isoformat() if value is not None else None

    def json(self, text: str) -> Any:
        """A JSON document (already serialised) as a parameter of a `json_type` column."""
        return text

    def json_value(self, value: Any) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(value) if isinstance(value, str | bytes) else value
        return loaded

    def types(self) -> dict[str, str]:
        """What `{json}`, `{ts}`, `{float}` and `{id}` stand for in a migration's statements."""
        return {"json": self.json_type, "ts": self.ts_type, "float": self.float_type, "id": self.id_type}

    @contextmanager
    def write_transaction(self, conn: Any) -> Iterator[Any]:
        """A cursor inside one write transaction: committed on success, rolled back on error. SQLite's BEGIN
        IMMEDIATE takes the database's write lock at once, so writers are serialised from the first statement."""
        cur = conn.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            yield cur
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        else:
            cur.execute("COMMIT")
        finally:
            cur.close()

    def lock(self, cur: Any, key: int) -> None:
        """Hold the named lock `key` until the transaction ends: SQLite's BEGIN IMMEDIATE already holds the one
        write lock of the database, which covers every name."""

    def has_table(self, cur: Any, table: str) -> bool:
        found = cur.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,))
        return found.fetchone() is not None

    def unreachable_errors(self) -> tuple[type[BaseException], ...]:
        """The driver's errors that say the database could not be reached or answer in time."""
        return ()


class PostgresDialect(Dialect):
    name = "postgresql"
    json_type = "JSONB"
    ts_type = "TIMESTAMPTZ"
    float_type = "DOUBLE PRECISION"
    id_type = "BIGSERIAL PRIMARY KEY"
    for_update = " FOR UPDATE"
    clock = "now()"
    epoch_clock = "EXTRACT(EPOCH FROM clock_timestamp())::double precision"

    def sql(self, text: str) -> str:
        return _placeholders(text)

    def older_than(self, column: str) -> str:
        return f"{column} < now() - make_interval(secs => ?)"

    def timestamp(self, value: datetime | None) -> Any:
        return value

    def json(self, text: str) -> Any:
        from psycopg.types.json import Jsonb

        return Jsonb(text, dumps=_as_is)

    @contextmanager
    def write_transaction(self, conn: Any) -> Iterator[Any]:
        with conn.transaction(), conn.cursor() as cur:
            yield cur

    def lock(self, cur: Any, key: int) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (key,))

    def has_table(self, cur: Any, table: str) -> bool:
        return bool(cur.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()[0])

    def unreachable_errors(self) -> tuple[type[BaseException], ...]:
        import psycopg

        return (psycopg.OperationalError,)  # connection lost or refused, a timeout, a server shutting down


@functools.lru_cache(maxsize=512)
def _placeholders(text: str) -> str:
    return text.replace("?", "%s")


def _as_is(already_json: str) -> str:
    return already_json


SQLITE = Dialect()
POSTGRES = PostgresDialect()
