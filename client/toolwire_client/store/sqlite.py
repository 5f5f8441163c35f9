"""The default run store: one SQLite file (WAL, writers serialised by BEGIN IMMEDIATE) in the user's data dir."""

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import platformdirs

from toolwire_client.store.sql import SqlRunStore, StoreMissing


def default_sqlite_path() -> Path:
    return Path(platformdirs.user_data_dir("toolwire")) / "runs.db"


class SqliteRunStore(SqlRunStore):
    def __init__(self, path: str | Path, connections: int = 1) -> None:
        super().__init__(connections)
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"SqliteRunStore({str(self.path)!r})"

    def _connect(self) -> sqlite3.Connection:
        if self._create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            where: str | Path = self.path
        elif self.path.is_file():
            where = self.path.resolve().as_uri() + "?mode=rw"  # never makes the file
        else:
            raise StoreMissing(self._where())
        conn = sqlite3.connect(where, isolation_level=None, check_same_thread=False, timeout=30.0, uri=not self._create)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        cur = self._conn.cursor()
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

    def _lock_migrations(self, cur: Any) -> None:
        """BEGIN IMMEDIATE already holds the write lock."""

    def _has_schema(self, cur: Any) -> bool:
        found = cur.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'")
        return found.fetchone() is not None

    def _where(self) -> str:
        return str(self.path)
