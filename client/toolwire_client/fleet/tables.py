"""The fleet's own tables in the run store's database (worker heartbeats, model requests per provider, the agent
doors serving the store by kind), migrated on
first use. They sit beside the run store's tables with their own versions (fleet_schema_version): only fleet
processes touch them. Append new migrations at the end; never edit one that has shipped."""

from toolwire_client.store import SqlRunStore
from toolwire_shared.persistence import Migration, Schema

MIGRATIONS: list[Migration] = [
    (
        1,
        [
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
        ],
    ),
    (
        2,
        [  # the agent doors serving the store, each by its kind (fleet/door_kinds.py)
            """CREATE TABLE IF NOT EXISTS fleet_doors (
                holder TEXT PRIMARY KEY,
                kind TEXT NOT NULL,
                door TEXT NOT NULL,
                beat_at DOUBLE PRECISION NOT NULL
            )""",
        ],
    ),
]

SCHEMA = Schema("fleet's tables", "fleet_schema_version", MIGRATIONS, lock="toolwire.fleet.migrations")


async def ensure_tables(store: SqlRunStore) -> None:
    """Migrate the fleet tables (two workers starting at once: one migrates, the other waits for its lock)."""
    await store.transaction(SCHEMA.migrate)
