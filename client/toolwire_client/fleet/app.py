"""The fleet's DBOS app: its name and version, where its system database lives, and the run queue."""

from pathlib import Path
from typing import Any

APP_NAME = "toolwire"
APP_VERSION = "toolwire-fleet-2"
"""Fixed rather than DBOS's hash of the workflow code: a client enqueues under it and every worker of this toolwire
dequeues and recovers it, wherever it was installed from."""
QUEUE, LEGS = "toolwire-runs", "toolwire-legs"
"""Runs wait on QUEUE with no limit (a run mostly waits: for its leg, or for a person); legs are driven from LEGS,
which the workers' --concurrency and --queue-concurrency limit."""
WORKFLOW, LEG_WORKFLOW = "toolwire-run", "toolwire-leg"
"""The registered names of fleet/workflow.py's workflows: what a client enqueues without importing them."""
LEG_ENDED, DECIDED = "leg-ended", "decision"
"""recv topics: a leg tells its run how it ended; approve / reject tell a waiting run that a call was decided."""


def is_postgres(db: str | None) -> bool:
    return bool(db) and str(db).startswith(("postgresql://", "postgres://"))


def system_database_url(db: str | None) -> str:
    """PostgreSQL: the run store's own database (DBOS keeps its tables in schema `dbos`), so runs and their
    workflows are shared by every machine that names it. SQLite: a file next to the run store (RUNS.dbos.sqlite)."""
    if db and is_postgres(db):
        return "postgresql://" + db.split("://", 1)[1]
    from toolwire_client.store.sqlite import default_sqlite_path

    path = Path(db.removeprefix("sqlite:///")) if db else default_sqlite_path()
    return f"sqlite:///{path.with_name(path.name + '.dbos.sqlite').resolve()}"


def dbos_config(db: str | None, executor_id: str) -> dict[str, Any]:
    """The DBOSConfig of a worker: quiet logs (our own lines say what happens), this process's executor id. No ping
    before each pooled connection is used: DBOS checks and records every step in a transaction of its own, and the
    ping was a round trip more for each (12 of the worker's 73 statements per loop step); a connection that died in
    the pool fails its statement, which DBOS's retry of connection errors runs again on a new one."""
    return {
        "name": APP_NAME,
        "system_database_url": system_database_url(db),
        "application_version": APP_VERSION,
        "executor_id": executor_id,
        "log_level": "WARNING",
        "notification_listener_polling_interval_sec": 0.2,
        "db_engine_kwargs": {"pool_pre_ping": False},
    }
