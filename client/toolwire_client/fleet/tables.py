"""The fleet's own tables in the run store's database (worker heartbeats, model requests per provider), created on
first use. They sit beside the run store's tables, not in its migrations: only fleet processes touch them."""

from collections.abc import Callable
from typing import Any, TypeVar

from toolwire_client.store import SqlRunStore

T = TypeVar("T")

_CREATE = [
    """CREATE TABLE IF NOT EXISTS fleet_executors (
        executor_id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        beat_at DOUBLE PRECISION NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS fleet_model_requests (
        provider TEXT NOT NULL,
        at DOUBLE PRECISION NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS fleet_model_requests_at ON fleet_model_requests (provider, at)",
]


async def ensure_tables(store: SqlRunStore) -> None:
    """Create the fleet tables if they are missing (under the store's migration lock: two workers start at once)."""

    def create(cur: Any) -> None:
        store._lock_migrations(cur)
        for statement in _CREATE:
            store._execute(cur, statement)

    await in_transaction(store, create)


async def in_transaction(store: SqlRunStore, work: Callable[[Any], T]) -> T:
    """`work(cursor)` in one transaction on the store's connection (`?` placeholders, as the store writes them)."""

    def run() -> T:
        with store._transaction() as cur:
            return work(cur)

    return await store._run(run)
