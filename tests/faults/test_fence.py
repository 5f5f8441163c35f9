"""The fence on a run's writes (issue 38): a worker that lost a run writes nothing of it, the failure path included;
a lease is judged by the database's clock, never by a hostname that network namespaces and containers share; a
driver the store does not answer stops before its lease runs out; every store connection is bounded in time."""

import os
import socket
import sqlite3
from typing import Any

import psycopg
import pytest

from helpers.polling import await_until
from toolwire_client.fleet import workflow
from toolwire_client.run.state import RunState
from toolwire_client.store import RunAlreadyClaimed, SqlRunStore
from toolwire_client.store.lease import Lease


def a_run(run_id: str) -> RunState:
    return RunState(run_id=run_id, agent_name="a", task="t", model="m")


def sql(db: str, text: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if db.startswith("postgresql://"):
        with psycopg.connect(db, autocommit=True) as conn:
            cur = conn.execute(text.replace("?", "%s"), params)  # type: ignore[arg-type]
            return cur.fetchall() if cur.description else []
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        return conn.execute(text, params).fetchall()
    finally:
        conn.close()


async def test_a_lease_run_out_is_taken_from_a_live_process_of_the_same_hostname(db: str, store: SqlRunStore) -> None:
    """Worker 1 in another network namespace shares this hostname and is alive, but cut off: once its lease has run
    out by the database's clock, its run is taken over (it was held for good when judged by host and pid)."""
    await store.save(a_run("run_cut"))
    cut_off = f"{socket.gethostname()}:{os.getpid()}:cafebabe"  # same host, a live pid
    await store.claim("run_cut", cut_off)
    with pytest.raises(RunAlreadyClaimed):  # its lease is fresh: it holds
        await store.claim("run_cut", "worker-2")
    sql(db, "UPDATE runs SET claimed_at = ? WHERE run_id = ?", ("2000-01-01T00:00:00+00:00", "run_cut"))
    await store.claim("run_cut", "worker-2")
    assert sql(db, "SELECT claimed_by FROM runs WHERE run_id = 'run_cut'") == [("worker-2",)]


async def test_the_failure_path_writes_nothing_to_a_run_another_worker_holds(db: str, store: SqlRunStore) -> None:
    """The worker whose drive failed after it lost the run (its late lease error surfacing) says it lost the run;
    the run stays as its new holder saves it."""
    await store.save(a_run("run_held"))
    await store.claim("run_held", "worker-2:1:x:y")
    before = await store.load("run_held")
    said: list[str] = []
    workflow.SETTINGS.store, workflow.SETTINGS.say = store, said.append
    try:
        assert await workflow._fail("run_held", "the lease renewal failed") == "running"
    finally:
        workflow.SETTINGS.store, workflow.SETTINGS.say = None, lambda line: None
    after = await store.load("run_held")
    assert (after.status, after.version, after.stop_reason) == ("running", before.version, None)
    assert said == ["lost run run_held to another worker; it is not marked failed here"]
    assert sql(db, "SELECT claimed_by FROM runs WHERE run_id = 'run_held'") == [("worker-2:1:x:y",)]


async def test_the_failure_path_ends_a_run_no_one_holds_under_a_lease_of_its_own(store: SqlRunStore) -> None:
    await store.save(a_run("run_free"))
    workflow.SETTINGS.store = store
    try:
        assert await workflow._fail("run_free", "no API key") == "failed"
    finally:
        workflow.SETTINGS.store = None
    ended = await store.load("run_free")
    assert (ended.status, ended.stop_reason) == ("failed", "worker_error")
    assert ended.report == "the worker could not drive the run: no API key"
    await store.claim("run_free", "anyone")  # its end let the lease go


@pytest.mark.postgres
async def test_a_driver_the_store_does_not_answer_stops_within_half_its_lease(postgres_url: str) -> None:
    """A renewal that hangs (here: its row held by another transaction, as a silent partition would hang it) never
    reaches the run: the lease says it is lost by its deadline, half the TTL after the last renewal."""
    from helpers.postgres import fresh_database
    from toolwire_client.store import open_store

    db = fresh_database(postgres_url, "t_fence_renew")
    store = await open_store(db)
    blocker = psycopg.connect(db)
    try:
        await store.save(a_run("run_hang"))
        async with Lease(store, await store.load("run_hang"), ttl_s=2.0) as lease:
            blocker.execute("SELECT 1 FROM runs WHERE run_id = 'run_hang' FOR UPDATE")
            lost = await await_until(lambda: lease.lost, "the lease to give up on its renewal", timeout_s=15)
            assert lost.startswith("its lease could not be renewed within 1 s")
            with pytest.raises(Exception, match="this process no longer drives the run"):
                lease.check()
            blocker.rollback()
    finally:
        blocker.close()
        await store.aclose()


@pytest.mark.postgres
async def test_every_run_store_connection_has_a_statement_timeout(postgres_url: str) -> None:
    from toolwire_client.store import open_store

    store = await open_store(postgres_url)
    try:
        shown = await store.transaction(lambda tx: tx.execute("SHOW statement_timeout").fetchone()[0])
    finally:
        await store.aclose()
    assert shown == "20s"


async def test_a_late_outcome_is_shown_once_and_never_joins_the_run(store: SqlRunStore) -> None:
    """On record for people (the console's step table lists it), once however often a worker says it, and the run's
    state (what the model is sent) does not hold it."""
    from toolwire_client.store.events import late_recorded, record_late
    from toolwire_client.ui.pages import steps_fragment
    from toolwire_client.ui.people import EVERYONE
    from toolwire_client.ui.reads import run_view
    from toolwire_shared.results import ToolResult

    await store.save(a_run("run_late"))
    charged = ToolResult(call_id="call_1", name="charge", content="charged 40 EUR to card 4242")
    for _ in range(2):
        await record_late(store, "run_late", [charged], "worker-1")
    assert [(o.call_id, o.tool, o.detail, o.recorded_by) for o in await late_recorded(store, "run_late")] == [
        ("call_1", "charge", "charged 40 EUR to card 4242", "worker-1")
    ]
    table = steps_fragment(await run_view(store, "run_late", EVERYONE))
    assert "late outcome" in table and "charged 40 EUR to card 4242" in table and "worker-1" in table
    assert (await store.load("run_late")).messages == []


@pytest.mark.postgres
async def test_a_renewal_that_fails_never_reaches_the_run(postgres_url: str) -> None:
    """The issue's first break: a renewal error (the store refusing connections) surfaced in the driving task, which
    then failed the run. Now the renewals are tried again until the deadline, and the lease is only given up."""
    from helpers.postgres import _free_port, fresh_database
    from toolwire_client.store import open_store
    from toolwire_client.store.postgres import PostgresRunStore

    store = await open_store(fresh_database(postgres_url, "t_fence_refused"))
    assert isinstance(store, PostgresRunStore)
    try:
        await store.save(a_run("run_refused"))
        async with Lease(store, await store.load("run_refused"), ttl_s=2.0) as lease:
            url = store.url
            store.url = f"postgresql://postgres@127.0.0.1:{_free_port()}/postgres"  # nothing listens: refused
            store.db.pool.drop_idle()
            lost = await await_until(lambda: lease.lost, "the lease to give up on its renewals", timeout_s=15)
            assert lost.startswith("its lease could not be renewed within 1 s")
            store.url = url
    finally:
        await store.aclose()
