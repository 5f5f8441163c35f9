"""The persistence kit (toolwire_shared.persistence) under every store: a database written by the code before the
kit is migrated in place for each store, each store keeping its own versions, and the named locks are separate
locks (the fleet's rate limit no longer waits for the run store's migrations)."""

import shutil
from pathlib import Path

import psycopg
import pytest

from toolwire_client.fleet import tables
from toolwire_client.fleet.ratelimit import take_slot
from toolwire_client.store import open_store
from toolwire_client.store.schema import LATEST
from toolwire_server.policy import audit
from toolwire_server.policy.audit import AuditLog, AuditRecord, read_records
from toolwire_server.tasks import store as task_store
from toolwire_server.tasks.store import TaskStore
from toolwire_shared.persistence import Schema

WRITTEN_BY_MAIN = Path(__file__).parent / "data" / "stores_written_by_main_a483c4a.db"
"""One SQLite file written by main at a483c4a (before the kit): a run, the fleet's tables with a model request, a
completed task and two audit records, each store's tables as its code of then made them (no version tables but the
run store's)."""


async def _version(db: Path, schema: Schema) -> int:
    store = await open_store(str(db), create=False)
    try:
        return await store.transaction(schema.version)
    finally:
        await store.aclose()


async def test_a_database_written_before_the_kit_is_migrated_in_place_for_every_store(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    shutil.copy(WRITTEN_BY_MAIN, db)

    store = await open_store(str(db), create=False)
    try:
        assert await store.schema_version() == LATEST
        assert (await store.load("run_main")).task == "the task written by main"
        await tables.ensure_tables(store)
        assert await take_slot(store, "scripted", 5) == 0
    finally:
        await store.aclose()
    assert await _version(db, tables.SCHEMA) == tables.SCHEMA.latest

    tasks = TaskStore(str(db))
    try:
        found = await tasks.get("task_main", "agent")
        assert found is not None and found.status == "completed" and found.result == {"content": []}
    finally:
        tasks.close()
    assert await _version(db, task_store.SCHEMA) == task_store.SCHEMA.latest

    log = AuditLog(str(db))
    log.append(AuditRecord(1.0, "agent", "tool2", "sha", None, "ok", 1.0, 2, None, "r"))
    log.close()
    assert sorted(r["tool"] for r in read_records(str(db))) == ["tool0", "tool1", "tool2"]
    assert await _version(db, audit.SCHEMA) == audit.SCHEMA.latest


@pytest.mark.postgres
async def test_the_fleet_rate_limit_does_not_wait_for_the_run_store_migrations_lock(postgres_url: str) -> None:
    """Before the kit, `Tx.lock()` was the run store's migrations lock reused: a process migrating (or holding it
    for any other work) stopped every worker's model calls until it ended, or their statements timed out."""
    from helpers.postgres import fresh_database

    url = fresh_database(postgres_url, "t_named_locks")
    store = await open_store(url)
    try:
        await tables.ensure_tables(store)
        with psycopg.connect(url, autocommit=True) as other:
            other.execute("SELECT pg_advisory_lock(%s)", (0x746F6F6C,))  # the migrations lock, held
            assert await take_slot(store, "scripted", 5) == 0
    finally:
        await store.aclose()


@pytest.mark.postgres
async def test_limit_counters_made_before_the_kit_are_migrated_in_place(postgres_url: str) -> None:
    from helpers.postgres import fresh_database
    from toolwire_server.policy import postgres_counters
    from toolwire_server.policy.config import LimitRule
    from toolwire_server.policy.postgres_counters import PostgresCounters, row_key

    url = fresh_database(postgres_url, "t_counters_before")
    rule = LimitRule(agent="*", tool="*", per_day=2)
    with psycopg.connect(url, autocommit=True) as conn:  # the table as main's code made it, one check spent
        conn.execute(
            "CREATE TABLE toolwire_limits (key text PRIMARY KEY, tokens double precision NOT NULL, at double precision"
            " NOT NULL, day bigint NOT NULL, day_count bigint NOT NULL, in_flight integer NOT NULL, flight_at double"
            " precision NOT NULL, admitted boolean NOT NULL)"
        )
        conn.execute(
            "INSERT INTO toolwire_limits VALUES (%s, 0, extract(epoch FROM now()), floor(extract(epoch FROM now())"
            " / 86400), 1, 0, 0, true)",
            (row_key(0, rule, "a"),),
        )
    counters = PostgresCounters(url)
    try:
        assert await counters.take("a", [(0, rule)]) is None  # the second of two a day
        refused = await counters.take("a", [(0, rule)])
        assert refused is not None and refused.reason == "per_day"
    finally:
        await counters.aclose()
    with psycopg.connect(url, autocommit=True) as conn:
        [(version,)] = conn.execute("SELECT MAX(version) FROM toolwire_limits_schema_version").fetchall()
    assert version == postgres_counters.SCHEMA.latest
