"""The default run store: one SQLite file (WAL, writers serialised by BEGIN IMMEDIATE) in the user's data dir."""

from pathlib import Path

import platformdirs

from toolwire_client.store.sql import SqlRunStore


def default_sqlite_path() -> Path:
    return Path(platformdirs.user_data_dir("toolwire")) / "runs.db"


class SqliteRunStore(SqlRunStore):
    def __init__(self, path: str | Path, connections: int = 1) -> None:
        super().__init__(Path(path), connections)
        self.path = Path(path)
