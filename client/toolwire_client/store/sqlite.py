"""The default run store: one SQLite file (WAL, writers serialised by BEGIN IMMEDIATE) in the user's data dir."""

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import platformdirs

from toolwire_client.store.sql import SqlRunStore


def default_sqlite_path() -> Path:
    return Path(platformdirs.user_data_dir("toolwire")) / "runs.db"


class SqliteRunStore(SqlRunStore):
    def __init__(self, path: str | Path, connections: int = 1) -> None:
        super().__init__(connections)
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"SqliteRunStore({str(self.path)!r})"

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30.0)
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
