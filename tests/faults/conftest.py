"""The fault matrix: every store case runs on a SQLite file and on the PostgreSQL the tests start (the store tests'
`db` fixture), against the real tool server processes the store tests use."""

from store.conftest import db, postgres_url, store

__all__ = ["db", "postgres_url", "store"]
