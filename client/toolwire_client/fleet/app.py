"""The fleet's DBOS app: its name and version, where its system database lives, and the run queue."""

from pathlib import Path
from typing import Any

APP_NAME = "toolwire"
APP_VERSION = "toolwire-fleet-2"
"""Fixed rather than DBOS's hash of the workflow code: a client enqueues under it and every worker of this toolwire
dequeues and recovers it, wherever it was installed from."""
QUEUE = "toolwire-runs"
"""Runs are driven from QUEUE, which the workers' --concurrency and --queue-concurrency limit: a leg holds a slot
while it drives; a run that waits for a person holds none (it has no workflow then, only its row)."""
WORKFLOW = "toolwire-run"
"""The registered name of the fleet's one workflow (fleet/workflow.py), a leg of a run: what a client enqueues
without importing it."""
OLD_QUEUE, OLD_LEG_WORKFLOW = "toolwire-legs", "toolwire-leg"
"""The legs queue and workflow of a fleet before this one (a run's workflow and its legs as two): a worker still
takes the legs left on it by an upgrade, and drives them as legs."""


def leg_options(workflow_id: str) -> dict[str, str]:
    """DBOS enqueue options of a leg with this workflow id (its input: the run id)."""
    return {"workflow_name": WORKFLOW, "queue_name": QUEUE, "workflow_id": workflow_id, "app_version": APP_VERSION}


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
        "db_engine_kwargs": {"pool_pre_ping": False, **_bounded_connections(db)},
    }


def _bounded_connections(db: str | None) -> dict[str, Any]:
    """DBOS's own PostgreSQL connections bounded as the run store's are (a worker cut off learns so in seconds), but
    for the statement timeout: DBOS sets its own session limits and retries its statements."""
    from toolwire_shared.db_timeouts import timeouts

    if not is_postgres(db):
        return {}
    bounds = {key: value for key, value in timeouts().items() if key != "options"}
    return {"connect_args": {"application_name": "dbos_transact", **bounds}}
