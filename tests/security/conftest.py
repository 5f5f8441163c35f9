"""The security tests: each hole of the trust boundaries, tried as an attacker would, against real processes. The
store cases run on a SQLite file and on the PostgreSQL the tests start (the store tests' `db` fixture); the store
tests' folder is put on the path, as pytest puts it there for them: their `procs.waiting_run` imports `driver`
(which registers their scripted model)."""

import sys
from pathlib import Path

from store.conftest import db, postgres_url, store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))

__all__ = ["db", "postgres_url", "store"]
