"""A toolwire run calling an A2A agent built of a2a-sdk's own server classes (helpers/a2a_sample.py) as a tool
(`--a2a-agent`): a run killed -9 while the remote task works resumes by following the same task (the message was
sent once), and a remote task's input-required is the run's own question, answered with `toolwire answer` and sent
on the same task."""

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agent2agent.a2a_model import asking_turns
from helpers.cli import REPO, TOOLWIRE, clean_env, run_toolwire
from helpers.fake_providers import FakeProvider
from helpers.polling import await_until
from helpers.servers import free_port, stop_process, wait_until_ok
from toolwire_client.run.state import RunState
from toolwire_client.store import open_store


@pytest.fixture
def sample(tmp_path: Path) -> Iterator[str]:
    """The sample A2A agent's URL; what it was sent is tmp_path/messages.log."""
    port, log = free_port(), tmp_path / "sample.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "tests/helpers/a2a_sample.py", str(port), str(tmp_path)], cwd=REPO, stderr=out
        )
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_until_ok(url + ".well-known/agent-card.json", proc, log, 60, "the sample A2A agent")
        yield url
    finally:
        stop_process(proc)


@pytest.fixture
def model() -> Iterator[str]:
    with FakeProvider(asking_turns) as provider:
        yield provider.openai_url


def run_args(task: str, model: str, sample: str, db: Path) -> list[str]:
    return [
        "run",
        task,
        "--model",
        "openai:local",
        "--base-url",
        model,
        "--a2a-agent",
        f"sample={sample}",
        "--db",
        str(db),
    ]


async def only_run(db: Path) -> RunState | None:
    if not await anyio.Path(db).exists():
        return None
    store = await open_store(str(db))
    try:
        runs = await store.list_runs()
        return await store.load(runs[0].run_id) if runs else None
    finally:
        await store.aclose()


def sent(tmp_path: Path) -> list[list[str]]:
    return [line.split("\t") for line in (tmp_path / "messages.log").read_text().splitlines()]


async def test_a_run_killed_while_the_remote_task_works_follows_the_same_task(
    sample: str, model: str, tmp_path: Path
) -> None:
    db, gate = tmp_path / "runs.db", tmp_path / "gate"
    argv = [TOOLWIRE, *run_args(f"wait {gate}", model, sample, db)]
    run = subprocess.Popen(argv, env=clean_env(), cwd=REPO)  # noqa: ASYNC220 - started, never waited on here
    try:

        async def task_saved() -> str | None:
            state = await only_run(db)
            return next((p.task_id for p in state.pending if p.task_id), None) if state else None

        task_id = await await_until(task_saved, "the A2A task id saved in the pending call", proc=run)
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=30)
    gate.write_text("go")
    state = await only_run(db)
    assert state is not None and state.status == "running"
    resumed = await anyio.to_thread.run_sync(
        lambda: run_toolwire("resume", state.run_id, "--db", str(db), env=clean_env())
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"Agent said: waited for {gate}" in resumed.stdout, resumed.stdout
    assert sent(tmp_path) == [[task_id, f"wait {gate}"]]  # one message: the resumed run followed the same task


async def test_a_remote_question_is_the_runs_question_answered_on_the_same_task(
    sample: str, model: str, tmp_path: Path
) -> None:
    db, env = tmp_path / "runs.db", clean_env()
    first = await anyio.to_thread.run_sync(
        lambda: run_toolwire(*run_args("ask Which colour?", model, sample, db), env=env)
    )
    assert first.returncode == 4, first.stdout + first.stderr  # waits for a person
    state = await only_run(db)
    assert state is not None
    [pending] = state.pending
    assert pending.input is not None and pending.input.message == "Which colour?" and pending.task_id
    answered = await anyio.to_thread.run_sync(
        lambda: run_toolwire("answer", state.run_id, "--json", '{"reply": "blue"}', "--db", str(db), env=env)
    )
    assert answered.returncode == 0, answered.stderr
    resumed = await anyio.to_thread.run_sync(lambda: run_toolwire("resume", state.run_id, "--db", str(db), env=env))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "Agent said: you said: blue" in resumed.stdout
    assert sent(tmp_path) == [[pending.task_id, "ask Which colour?"], [pending.task_id, "blue"]]
    again = await anyio.to_thread.run_sync(lambda: run_toolwire("resume", state.run_id, "--db", str(db), env=env))
    assert again.returncode != 0 and len(sent(tmp_path)) == 2  # an ended run sends nothing more
