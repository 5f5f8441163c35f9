"""Every store test runs twice: on a SQLite file and on a real PostgreSQL server started for the session."""

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from helpers.postgres import fresh_database, postgres_url
from helpers.run_store import opened_store
from toolwire_client.store import SqlRunStore

__all__ = ["postgres_url"]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A `--db` value for an empty store: a SQLite path or a PostgreSQL URL."""
    if request.param == "sqlite":
        return str(tmp_path / "runs.db")
    base: str = request.getfixturevalue("postgres_url")
    return fresh_database(base, f"t_{uuid.uuid4().hex[:12]}")


@pytest.fixture
async def store(db: str) -> AsyncIterator[SqlRunStore]:
    async with opened_store(db) as opened:
        yield opened
