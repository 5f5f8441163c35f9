"""A fleet run whose MCP task outlives its worker: the run calls a tool that runs only as a task (`serve --http`), its
worker is killed -9 once the task id is saved in the pending call, and another worker takes the leg over and follows
the same task (tasks/get): the tool ran once, the run ends with the task's result, never "outcome unknown"."""

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from fleet_procs import ENDED, Worker, start_worker, started

from helpers.fake_providers import FakeProvider
from helpers.polling import await_until, wait_until
from helpers.servers import HttpServer
from tasks.job_model import job_turns
from toolwire_client.config import RunConfig, RunLimits, ServerSpec
from toolwire_client.fleet.submit import FleetClient, submit
from toolwire_client.run.state import RunState
from toolwire_client.store import SqlRunStore, open_store

pytestmark = pytest.mark.timeout(180)

TOOLS = "tests/tasks/task_tools.py:registry"
JOB_S = 4
"""How long the task works: the worker is killed well within it (the test checks the task was still working)."""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[HttpServer, FakeProvider, Path]]:
    tasks = tmp_path / "tasks.sqlite"
    with HttpServer(TOOLS, env={"TOOLWIRE_TASK_STORE": str(tasks)}) as server, FakeProvider(job_turns) as provider:
        yield server, provider, tasks


async def test_a_task_whose_worker_died_is_followed_by_the_worker_that_takes_the_run_over(
    served: tuple[HttpServer, FakeProvider, Path], tmp_path: Path
) -> None:
    server, provider, tasks = served
    db, marker = str(tmp_path / "runs.db"), tmp_path / "job"

    def worker(log: str) -> Worker:
        servers = [ServerSpec(name="jobs", url=server.url)]
        env = {"OPENAI_BASE_URL": provider.openai_url}  # a worker's provider URL is its own, never a run's
        return start_worker(db, tmp_path / log, concurrency=1, env_extra=env, servers=servers)

    first = worker("first.log")
    store = await open_store(db)
    try:
        wait_until(lambda: started(first), "the first worker to take runs", timeout_s=60, interval_s=0.1)
        config = RunConfig(model="openai:local", servers=[ServerSpec(name="jobs")], limits=RunLimits())
        fleet = FleetClient(db)
        try:
            run_id = await submit(store, fleet, f"Run long_task_job {JOB_S} {marker}", config)
        finally:
            fleet.close()
        saved = lambda: saved_task(store, run_id)  # noqa: E731
        task_id = await await_until(saved, "the task id saved", timeout_s=60, proc=first.proc, log=first.log)
        first.kill9()
        assert task_row(tasks, task_id)[0] == "working"  # killed mid-task
        second = worker("second.log")
        try:
            final = await await_until(lambda: ended(store, run_id), "the run to end", timeout_s=90, proc=second.proc)
        finally:
            second.stop()
    finally:
        first.stop()
        await store.aclose()

    log = (tmp_path / "second.log").read_text()
    assert final.status == "done", (final.status, final.report, log)
    assert "took over" in log, log
    assert (tmp_path / "job.runs").read_text() == "run\n"  # the tool ran once: the second worker followed the task
    (result,) = final.steps[0].results
    assert result.error_kind is None and result.content == f"done after {JOB_S} s", result
    assert final.messages[-1].text == f"Job said: done after {JOB_S} s"  # type: ignore[union-attr]
    assert task_row(tasks, task_id) == ("completed", 0)
    assert len(provider.requests) == 2  # one model turn before the kill, one after: the first was not asked again


async def saved_task(store: SqlRunStore, run_id: str) -> str | None:
    """The task id the run saved in its pending call (before its first tasks/get), once it has."""
    state = await store.load(run_id)
    assert state.status not in ENDED, (state.status, state.report)
    return next((p.task_id for p in state.pending if p.task_id), None)


async def ended(store: SqlRunStore, run_id: str) -> RunState | None:
    state = await store.load(run_id)
    return state if state.status in ENDED else None


def task_row(tasks: Path, task_id: str) -> tuple[str, int]:
    """What the tool server's task store says of the task: (status, cancel requested)."""
    with closing(sqlite3.connect(tasks)) as conn:  # sqlite3's own `with` commits, it does not close
        row: tuple[str, int] = conn.execute(
            "SELECT status, cancel_requested FROM toolwire_tasks WHERE task_id = ?", (task_id,)
        ).fetchone()
    return row
