"""Run stores: where RunState lives between steps and between processes (SQLite by default, PostgreSQL to share)."""

from toolwire_client.store.base import LeaseLost, RunAlreadyClaimed, RunStore, RunSummary, SaveRefused, StaleRunState
from toolwire_client.store.claims import claim_owner
from toolwire_client.store.sql import ApprovalRefused, RunNotFound, SqlRunStore, StoreMissing

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
    "StoreMissing",
    "check_db",
    "claim_owner",
    "open_store",
]

DB_SCHEMES = ("sqlite:///", "postgresql://", "postgres://")


def check_db(db: str | None) -> str | None:
    """`db` when it names a store this opens: a SQLite file path, sqlite:///PATH, or a PostgreSQL URL. A URL of any
    other scheme (mysql://...) raises ValueError: taken for a path it would make a folder named after the scheme."""
    if db and "://" in db and not db.startswith(DB_SCHEMES):
        scheme = db.split("://", 1)[0]
        raise ValueError(
            f"unknown run store '{scheme}://': use a SQLite file path, sqlite:///PATH, or a postgresql:// "
            "(or postgres://) URL"
        )
    return db


async def open_store(db: str | None = None, connections: int = 1, *, create: bool = True) -> SqlRunStore:
    """Open (and migrate) a store: None for the default SQLite file, a path (or sqlite:///path), or a
    `postgresql://` URL; with up to `connections` connections for operations from many tasks at once. With `create`
    False, a store that does not exist yet raises StoreMissing (the commands that only read or decide make none)."""
    check_db(db)
    if db and db.startswith(("postgresql://", "postgres://")):
        from toolwire_client.store.postgres import PostgresRunStore

        return await PostgresRunStore(db, connections).open(create)
    from toolwire_client.store.sqlite import SqliteRunStore, default_sqlite_path

    path = db.removeprefix("sqlite:///") if db else None
    return await SqliteRunStore(path or default_sqlite_path(), connections).open(create)
