"""The fleet's own tables in the run store's database (worker heartbeats, model requests per provider), created on
first use. They sit beside the run store's tables, not in its migrations: only fleet processes touch them."""

from toolwire_client.store import SqlRunStore
from toolwire_client.store.sql import Tx

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
    """Create the fleet tables if they are missing (under the store's lock: two workers start at once)."""

    def create(tx: Tx) -> None:
        tx.lock()
        for statement in _CREATE:
            tx.execute(statement)

    await store.transaction(create)
