"""The security tests' stores: a SQLite file and the PostgreSQL the tests start (the store tests' `db` fixture), and
the store tests' folder on the path, as pytest puts it there for them: their `procs.waiting_run` imports `driver`
(which registers their scripted model)."""

import sys
from pathlib import Path

from store.conftest import db, postgres_url, store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))

__all__ = ["db", "postgres_url", "store"]
