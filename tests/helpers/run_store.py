"""The run store a test reads beside the processes it starts, closed when the test is done: the one body of every
folder's `store` fixture (each folder picks its own `db`)."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from toolwire_client.store import SqlRunStore, open_store


@asynccontextmanager
async def opened_store(db: str) -> AsyncIterator[SqlRunStore]:
    """The store at `db` (a SQLite path or a PostgreSQL URL), created if new, closed on the way out."""
    store = await open_store(db)
    try:
        yield store
    finally:
        await store.aclose()
