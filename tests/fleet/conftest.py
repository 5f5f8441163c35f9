"""Fleet tests start real `toolwire worker` processes on a real PostgreSQL (or SQLite) run store; `store` opens the
test's `db` as the store tests' fixture does."""

from helpers.postgres import postgres_url
from store.conftest import store

__all__ = ["postgres_url", "store"]
