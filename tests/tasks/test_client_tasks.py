"""toolwire's client following MCP tasks on toolwire's server (`toolwire run` against `serve --http`): a run killed
-9 while its task works resumes by following the same task (the tool ran once, no "outcome unknown"); a task that
outlives the call's timeout is cancelled."""

import logging
import signal
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from helpers.cli import TOOLWIRE, clean_env, run_toolwire
from helpers.fake_providers import FakeProvider
from helpers.polling import await_until
from helpers.servers import HttpServer
from helpers.telemetry import install
from tasks.job_model import job_turns
from toolwire_client.store import open_store
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.source import RunContext, ToolRequest
from toolwire_shared.messages import ToolCall

TOOLS = "tests/tasks/task_tools.py:registry"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HttpServer, FakeProvider, Path]]:
    """One tool server (its task store a file) and one model for the module's runs."""
    store = tmp_path_factory.mktemp("tasks") / "tasks.sqlite"
    with HttpServer(TOOLS, env={"TOOLWIRE_TASK_STORE": str(store)}) as server, FakeProvider(job_turns) as provider:
        yield server, provider, store


def run_argv(served: tuple[HttpServer, FakeProvider, Path], task: str, db: str) -> list[str]:
    server, provider, _ = served
    model = ("--model", "openai:local", "--base-url", provider.openai_url)
    return [TOOLWIRE, "run", task, *model, "--server-url", server.url, "--db", db]


def start_run(argv: list[str], env: dict[str, str]) -> "subprocess.Popen[str]":
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


async def pending_task(db: str) -> tuple[str, str] | None:
    """(run id, task id) once the only run in `db` saved a task id in its pending call."""
    if not await anyio.Path(db).exists():
        return None
    store = await open_store(db)
    try:
        runs = await store.list_runs()
        state = await store.load(runs[0].run_id) if runs else None
    finally:
        await store.aclose()
    task_id = next((p.task_id for p in state.pending if p.task_id), None) if state else None
    return (state.run_id, task_id) if state and task_id else None


async def test_a_run_killed_while_its_task_works_resumes_by_following_the_same_task(
    served: tuple[HttpServer, FakeProvider, Path], tmp_path: Path
) -> None:
    marker, db, env = tmp_path / "job", str(tmp_path / "runs.db"), clean_env()
    argv = run_argv(served, f"Run long_job 2 {marker}", db)
    run = start_run(argv, env)
    try:
        run_id, task_id = await await_until(lambda: pending_task(db), "the task id saved", proc=run)
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=30)
    resumed = await anyio.to_thread.run_sync(lambda: run_toolwire("resume", run_id, "--db", db, env=env))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "Job said: done after 2 s" in resumed.stdout, resumed.stdout
    assert (tmp_path / "job.runs").read_text() == "run\n"  # the tool ran once: the resumed run followed its task
    store = await open_store(db)
    try:
        final = await store.load(run_id)
    finally:
        await store.aclose()
    (result,) = final.steps[0].results
    assert result.error_kind is None and result.content == "done after 2 s", result
    assert task_status(served[2], task_id) == ("completed", 0)


def test_a_task_past_the_calls_timeout_is_cancelled(
    served: tuple[HttpServer, FakeProvider, Path], tmp_path: Path
) -> None:
    marker, db = tmp_path / "job", str(tmp_path / "runs.db")
    done = run_toolwire(*run_argv(served, f"Run long_job 60 {marker}", db)[1:], "--tool-timeout", "1", env=clean_env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "timed out" in done.stdout and "its task was cancelled" in done.stdout, done.stdout
    assert (tmp_path / "job.runs").read_text() == "run\n"
    with sqlite3.connect(served[2]) as conn:  # the task the call made: the one the marker's run started
        (task_id,) = conn.execute("SELECT task_id FROM toolwire_tasks WHERE cancel_requested = 1").fetchone()
    assert task_status(served[2], task_id) == ("cancelled", 1)


def task_status(store: Path, task_id: str) -> tuple[str, int]:
    """What the server's task store says of the task (the server's own record, read from its file)."""
    with sqlite3.connect(store) as conn:
        row: tuple[str, int] = conn.execute(
            "SELECT status, cancel_requested FROM toolwire_tasks WHERE task_id = ?", (task_id,)
        ).fetchone()
    return row


async def test_a_required_task_tool_is_not_offered_on_a_handshake_era_connection(
    served: tuple[HttpServer, FakeProvider, Path], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="toolwire.client.mcp")
    legacy = McpSource("jobs", url=served[0].url, mode="legacy")
    modern = McpSource("jobs", url=served[0].url)
    await legacy.start()
    await modern.start()
    try:
        assert [spec.name for spec in await legacy.list_tools()] == ["long_job"]
        assert [spec.name for spec in await modern.list_tools()] == ["long_job", "long_task_job", "quick_job"]
    finally:
        await modern.aclose()  # the reverse of their starts: each holds a task group
        await legacy.aclose()
    assert (
        "tool 'quick_job' of server" in caplog.text
        and "is not offered to the model: it runs only as a task" in caplog.text
    )


async def test_a_task_is_one_span_with_its_polls_as_events(
    served: tuple[HttpServer, FakeProvider, Path], tmp_path: Path
) -> None:
    spans = install().spans
    spans.clear()
    source = McpSource("jobs", url=served[0].url)
    await source.start()
    try:
        call = ToolCall(id="c1", name="long_job", arguments={"seconds": 1.2, "marker": str(tmp_path / "m")})
        result = await source.call(ToolRequest(call, RunContext("run_span"), timeout_s=30))
    finally:
        await source.aclose()
    assert result.content == "done after 1.2 s"
    (span,) = [s for s in spans.get_finished_spans() if s.name == "await_task long_job"]
    assert span.attributes is not None and span.attributes["mcp.task.status"] == "completed"
    polls = [event for event in span.events if event.name == "tasks/get"]
    assert len(polls) == span.attributes["mcp.task.polls"] >= 2  # every poll an event, none a span of its own
    assert polls[-1].attributes is not None and polls[-1].attributes["mcp.task.status"] == "completed"
    assert not [s for s in spans.get_finished_spans() if "tasks/get" in s.name]
