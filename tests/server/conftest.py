"""Shared fixtures for the server tests; the process helpers live in tests/helpers/servers.py."""

from pathlib import Path

import pytest


@pytest.fixture
def support_db(tmp_path: Path) -> dict[str, str]:
    """A fresh SQLite file for the support-desk example, passed to the server process by env."""
    return {"TOOLWIRE_SUPPORT_DB": str(tmp_path / "support.sqlite3")}
