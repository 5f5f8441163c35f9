"""Run stores: where RunState lives between steps and between processes (SQLite by default, PostgreSQL to share)."""

from toolwire_client.store.base import LeaseLost, RunAlreadyClaimed, RunStore, RunSummary, SaveRefused, StaleRunState
from toolwire_client.store.claims import claim_owner
from toolwire_client.store.sql import ApprovalRefused, RunNotFound, SqlRunStore

__all__ = [
    "ApprovalRefused",
    "LeaseLost",
    "RunAlreadyClaimed",
    "RunNotFound",
    "RunStore",
    "RunSummary",
    "SaveRefused",
    "SqlRunStore",
    "StaleRunState",
    "claim_owner",
    "open_store",
]


async def open_store(db: str | None = None, connections: int = 1) -> SqlRunStore:
    """Open (and migrate) a store: None for the default SQLite file, a path (or sqlite:///path), or a
    `postgresql://` URL; with up to `connections` connections for operations from many tasks at once."""
    if db and db.startswith(("postgresql://", "postgres://")):
        from toolwire_client.store.postgres import PostgresRunStore

        return await PostgresRunStore(db, connections).open()
    from toolwire_client.store.sqlite import SqliteRunStore, default_sqlite_path

    path = db.removeprefix("sqlite:///") if db else None
    return await SqliteRunStore(path or default_sqlite_path(), connections).open()
