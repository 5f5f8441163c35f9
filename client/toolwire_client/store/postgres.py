"""The shared run store: PostgreSQL from a URL, for several processes or machines resuming the same runs."""

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from toolwire_client.store.sql import SqlRunStore
from toolwire_shared.db_timeouts import bounded

_MIGRATION_LOCK = 0x746F6F6C  # "tool": pg_advisory_xact_lock key so two processes opening at once migrate once


class PostgresRunStore(SqlRunStore):
    json_type = "JSONB"
    ts_type = "TIMESTAMPTZ"
    for_update = " FOR UPDATE"
    unreachable_errors = (psycopg.OperationalError,)  # connection lost or refused, a timeout, a server shutting down
    clock = "now()"
    epoch_clock = "EXTRACT(EPOCH FROM clock_timestamp())::double precision"

    def _older_than(self, column: str) -> str:
        return f"{column} < now() - make_interval(secs => ?)"

    def __init__(self, url: str, connections: int = 1) -> None:
        super().__init__(connections)
        self.url = url

    def __repr__(self) -> str:
        return f"PostgresRunStore({self.url.split('@')[-1]!r})"

    def _connect(self) -> psycopg.Connection[Any]:
        return psycopg.connect(bounded(self.url), autocommit=True)

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        with self._conn.transaction(), self._conn.cursor() as cur:
            yield cur

    def _lock_migrations(self, cur: Any) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))

    def _has_schema(self, cur: Any) -> bool:
        return bool(cur.execute("SELECT to_regclass('schema_version') IS NOT NULL").fetchone()[0])

    def _where(self) -> str:
        return self.url.split("@")[-1]

    def _sql(self, text: str) -> str:
        return text.replace("?", "%s")

    def _ts_param(self, value: datetime | None) -> Any:
        return value

    def _json_param(self, value: str) -> Any:
        return Jsonb(value, dumps=lambda already_json: already_json)
