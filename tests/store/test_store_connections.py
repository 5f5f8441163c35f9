"""A store shared by many runs in one process (a fleet worker's) keeps at most N connections, lets N operations run
at once, and drops a connection the database closed instead of failing every later operation on it."""

import threading
from typing import Any

import anyio
import psycopg
import pytest
from test_store_basics import a_run

from toolwire_client.store import open_store


async def test_many_tasks_share_at_most_n_connections(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store = await open_store(db, connections=3)
    opened: list[Any] = []
    connect = store.db.pool.connect

    def counted() -> Any:
        opened.append(conn := connect())
        return conn

    monkeypatch.setattr(store.db.pool, "connect", counted)
    await store.aclose()  # the connection open() migrated on is closed: every later one is counted
    three_at_once = threading.Barrier(3, timeout=20)  # broken unless three operations hold connections together
    active, most, lock = [0], [0], threading.Lock()

    def meet() -> None:
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
        three_at_once.wait()
        with lock:
            active[0] -= 1

    async def one(i: int) -> None:
        await store.db.run(meet)  # the pool itself: SQLite would serialise three write transactions
        await store.save(a_run(f"run_{i}"))

    try:
        async with anyio.create_task_group() as group:
            for i in range(30):
                group.start_soon(one, i)
        assert most[0] == 3 and len(opened) == 3
        assert sorted(r.run_id for r in await store.list_runs(limit=100)) == sorted(f"run_{i}" for i in range(30))
    finally:
        await store.aclose()


@pytest.mark.postgres
async def test_a_connection_the_server_closed_is_replaced(postgres_url: str) -> None:
    from helpers.postgres import fresh_database

    db = fresh_database(postgres_url, "t_replaced")
    store = await open_store(db)
    try:
        await store.save(a_run("run_1"))
        mine = await store.transaction(lambda tx: tx.execute("SELECT pg_backend_pid()").fetchone()[0])
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (mine,))
        with pytest.raises(psycopg.OperationalError):
            await store.load("run_1")  # the operation that meets the dead connection fails, readably
        assert (await store.load("run_1")).run_id == "run_1"  # the next one connects again
    finally:
        await store.aclose()
