"""The fleet on one machine with the default SQLite store, all through the real CLI: `toolwire worker`, `toolwire
submit` (run's own options), `toolwire wait` (its exit status says done or waiting), `toolwire approve` putting the
run back on the queue; a user's mistakes as one line; the per-provider request budget on a real database."""

import asyncio
import json
import re
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fleet_procs import Worker, refunds, start_worker, started, support_db, support_server

from helpers.cli import REPO, clean_env, run_toolwire
from helpers.polling import wait_until
from toolwire_client.fleet.ratelimit import take_slot
from toolwire_client.fleet.tables import ensure_tables
from toolwire_client.mistakes import WAITING
from toolwire_client.store import open_store
from toolwire_client.store.claims import claim_owner

pytestmark = pytest.mark.timeout(180)


def toolwire(*args: str, timeout_s: float = 60) -> subprocess.CompletedProcess[str]:
    return run_toolwire(*args, env=clean_env(PYTHONPATH=str(REPO)), timeout_s=timeout_s)


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "runs.db")


@pytest.fixture
def worker(db: str, tmp_path: Path) -> Iterator[Worker]:
    w = start_worker(
        db,
        tmp_path / "worker.log",
        concurrency=2,
        extra=("--rate-limit", "scripted=1000"),
        servers=[support_server(tmp_path)],
    )
    try:
        wait_until(lambda: started(w), "the worker to take runs", timeout_s=60, interval_s=0.1)
        yield w
    finally:
        w.stop()


def test_submit_wait_approve_on_one_machine(db: str, worker: Worker, tmp_path: Path) -> None:
    plain = toolwire(
        "submit", "What does order A123 cost with GST?", "--model", "scripted:recovers", "--server", "support",
        "--max-steps", "6", "--db", db,
    )  # fmt: skip
    refund = toolwire(
        "submit", "Refund one item of order A123", "--model", "scripted:support_demo", "--server", "support",
        "--db", db,
    )  # fmt: skip
    assert plain.returncode == 0 and refund.returncode == 0, plain.stderr + refund.stderr
    plain_id, refund_id = plain.stdout.strip(), refund.stdout.strip()
    refund_db = support_db(tmp_path, refund_id)  # the worker's servers file gives each run its own
    assert plain_id.startswith("run_") and refund_id.startswith("run_") and plain_id != refund_id

    done = toolwire("wait", plain_id, "--db", db, "--timeout", "60", timeout_s=90)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{plain_id}: done (final_answer)" in done.stdout and "5900.0 rupees" in done.stdout

    waiting = toolwire("wait", refund_id, "--db", db, "--timeout", "60", timeout_s=90)
    assert waiting.returncode == WAITING, waiting.stdout + waiting.stderr
    assert "waiting_for_approval" in waiting.stdout and refunds(refund_db) == 0
    approved = toolwire("approve", refund_id, "--db", db)
    assert approved.returncode == 0, approved.stderr
    assert f"the worker fleet goes on with it (workflow {refund_id})" in approved.stdout
    finished = toolwire("wait", refund_id, "--db", db, "--timeout", "60", timeout_s=90)
    assert finished.returncode == 0 and "Refunded one keyboard" in finished.stdout, finished.stdout
    assert refunds(refund_db) == 1

    listed = json.loads(toolwire("runs", "--db", db, "--json").stdout)
    assert {r["run_id"]: r["status"] for r in listed} == {plain_id: "done", refund_id: "done"}
    conn = sqlite3.connect(db)
    try:
        [state_json] = conn.execute("SELECT state FROM runs WHERE run_id = ?", (plain_id,)).fetchone()
        [requests] = conn.execute("SELECT COUNT(*) FROM fleet_model_requests WHERE provider = 'scripted'").fetchone()
    finally:
        conn.close()
    state = json.loads(state_json)
    assert {t["name"] for t in state["config"]["tools"]} >= {"get_order", "issue_refund"}  # recorded as offered
    total_steps = len(state["steps"]) + len(
        json.loads(toolwire("trace", "export", refund_id, "--db", db).stdout)["steps"]
    )
    assert requests == total_steps  # one fleet-wide request slot per model call


def test_mistakes_are_one_line(db: str, tmp_path: Path) -> None:
    missing = toolwire("wait", "run_nope", "--db", db)
    assert missing.returncode == 1 and missing.stderr.strip().startswith("Error: no run store at"), missing.stderr
    assert not Path(db).exists()  # `wait` reads a store; it never makes one
    asyncio.run(_empty_store(db))
    unknown = toolwire("wait", "run_nope", "--db", db)
    assert unknown.returncode == 1 and unknown.stderr.strip() == (
        "Error: no run 'run_nope' in this store; `toolwire runs` lists the runs it holds"
    )
    refused = toolwire("worker", "--db", "postgresql://nobody@127.0.0.1:1/none")
    assert refused.returncode == 1 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert refused.stderr.startswith("Error: the run store failed: connection failed")
    bad_limit = toolwire("worker", "--db", db, "--rate-limit", "anthropic")
    assert bad_limit.returncode == 2 and "give PROVIDER=N" in bad_limit.stderr and "Traceback" not in bad_limit.stderr
    no_server = toolwire("submit", "a task", "--model", "scripted:recovers", "--db", db)
    assert no_server.returncode == 2 and "name at least one tool server" in no_server.stderr


async def _empty_store(db: str) -> None:
    await (await open_store(db)).aclose()


async def test_request_budget_is_shared(tmp_path: Path) -> None:
    first, second = await open_store(str(tmp_path / "runs.db")), await open_store(str(tmp_path / "runs.db"))
    try:
        await ensure_tables(first)
        assert await take_slot(first, "anthropic", 2) == 0
        assert await take_slot(second, "anthropic", 2) == 0  # another process's store: the same budget
        wait = await take_slot(first, "anthropic", 2)
        assert 59 < wait <= 60
        assert await take_slot(second, "openai", 2) == 0  # a budget per provider
    finally:
        await first.aclose()
        await second.aclose()


def test_wait_says_when_no_worker_will_end_the_run(db: str, tmp_path: Path) -> None:
    """No worker runs: the run stays queued, and `wait` says no worker has taken it; once its workflow is
    cancelled, `wait` says so instead of blocking."""
    from toolwire_client.fleet.submit import FleetClient

    queued = toolwire(
        "submit", "What does order A123 cost with GST?", "--model", "scripted:recovers", "--server",
        "support", "--db", db,
    )  # fmt: skip
    run_id = queued.stdout.strip()
    still = toolwire("wait", run_id, "--db", db, "--timeout", "5")  # the first look at the queue is after 3 s
    assert still.returncode == 5 and f"run {run_id} is still running after 5 s" in still.stdout  # 5: timed out
    note = f"no worker has taken run {run_id} yet; is `toolwire worker` running on this store?"
    assert still.stderr.splitlines()[0] == note, still.stderr  # said once, while it goes on waiting
    fleet = FleetClient(db)
    try:
        fleet.client.cancel_workflow(run_id)
    finally:
        fleet.close()
    told = toolwire("wait", run_id, "--db", db, "--timeout", "30")
    assert told.returncode == 1 and len(told.stderr.strip().splitlines()) == 1, told.stderr
    assert f"will not go on: its fleet workflow {run_id} is CANCELLED" in told.stderr


async def test_a_run_held_by_a_live_driver_is_driven_once_it_lets_go(db: str, tmp_path: Path) -> None:
    """A leg that finds its run leased by a live process (a worker wrongly taken for dead, a `toolwire resume`)
    tries again until the lease is let go, each try with its own tool sources (a shared connection's lease opens
    once), and then drives the run to its end."""
    queued = toolwire(
        "submit", "What does order A123 cost with GST?", "--model", "scripted:recovers", "--server",
        "support", "--max-steps", "6", "--db", db,
    )  # fmt: skip
    run_id, holder = queued.stdout.strip(), claim_owner()  # this test's process: alive, so its lease holds
    store = await open_store(db)
    try:
        await store.claim(run_id, holder)
        w = start_worker(db, tmp_path / "worker.log", concurrency=2, servers=[support_server(tmp_path)])
        try:
            tried = f"run {run_id}: run {run_id} is being driven by another process ({holder}"
            wait_until(lambda: tried in w.log.read_text(), "the leg to find the run held", timeout_s=60)
            await store.release(run_id, holder)
            done = toolwire("wait", run_id, "--db", db, "--timeout", "60", timeout_s=90)
        finally:
            w.stop()
        assert done.returncode == 0 and "5900.0 rupees" in done.stdout, done.stdout + w.log.read_text()
        assert "could not be driven" not in w.log.read_text()
    finally:
        await store.aclose()


def test_a_worker_that_stopped_cleanly_is_not_said_to_be_taken_over(db: str, tmp_path: Path) -> None:
    first, second = (start_worker(db, tmp_path / f"{name}.log") for name in ("first", "second"))
    try:
        for w in (first, second):
            wait_until(lambda w=w: started(w), "the worker to take runs", timeout_s=60, interval_s=0.1)
        executor = re.search(r"worker (\S+): taking runs", first.log.read_text())
        assert executor is not None, first.log.read_text()
        first.stop()  # SIGTERM: a clean stop, with no run of its own

        def forgotten() -> bool:  # the other worker's takeover check said what it had to, then dropped the row
            with sqlite3.connect(db) as conn:
                rows = conn.execute("SELECT 1 FROM fleet_executors WHERE executor_id = ?", (executor[1],)).fetchall()
            return not rows

        wait_until(forgotten, "the stopped worker's heartbeat row to go", timeout_s=60, interval_s=0.1)
        assert "took over" not in second.log.read_text(), second.log.read_text()  # not "took over 0 run(s)"
    finally:
        first.stop()
        second.stop()
