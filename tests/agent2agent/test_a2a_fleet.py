"""`agent serve --a2a --fleet`: the door only submits, wakes, cancels and reads; real `toolwire worker` processes on
a SQLite run store drive every task. A task sent to the door is driven by a worker, an approval answered through
A2A wakes the fleet, a worker killed -9 mid-run is taken over and the A2A client still gets the answer, tasks/cancel
stops the run on the worker, and neither the door's options nor a caller can name a tool server command."""

import json
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from a2a.client import Client
from a2a.types import CancelTaskRequest, GetTaskRequest, Message, Part, Role, SendMessageRequest, Task, TaskState
from google.protobuf.struct_pb2 import Struct

from agent2agent.a2a_model import tool_turns
from agent2agent.a2a_serve import ALICE
from agent2agent.a2a_serve import TOOLS as A2A_TOOLS
from agent2agent.test_a2a_server import a2a_client, said, send
from fleet.fleet_procs import Worker, start_worker, started, support_db, support_server
from helpers.cli import REPO, TOOLWIRE, clean_env
from helpers.fake_providers import FakeProvider
from helpers.polling import await_until
from helpers.run_store import opened_store
from helpers.servers import free_port, stop_process, tokens_file, wait_until_ok
from toolwire_client.config import ServerSpec
from toolwire_client.fleet.submit import FleetClient
from toolwire_client.store import SqlRunStore

FAST_CANCEL = {"TOOLWIRE_FLEET_CANCEL_POLL_S": "0.5"}
"""A worker asks every 0.5 s whether the leg it drives was cancelled."""
TOOLS = ServerSpec(name="tools", command=A2A_TOOLS, cwd=str(REPO))
"""The A2A tests' tools (`hold` waits for a file) as the workers' servers file names them."""


class Door:
    """`agent serve --a2a --fleet` on a free port, its agent on `model` with the workers' server `support`."""

    def __init__(self, tmp: Path, model: str, *extra: str, server: str = "support") -> None:
        tokens = tokens_file(tmp, {"alice": (ALICE, ["*"])})
        port = free_port()
        self.url, self.log = f"http://127.0.0.1:{port}/", tmp / f"door-{port}.log"
        argv = [
            TOOLWIRE, "agent", "serve", "--a2a", "--fleet", "--model", model, "--fleet-server", server,
            "--db", str(tmp / "runs.db"), "--tokens", str(tokens), "--port", str(port), *extra,
        ]  # fmt: skip
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(argv, env=clean_env(), stderr=log)
        wait_until_ok(self.url + ".well-known/agent-card.json", self.proc, self.log, 60, "the A2A door")

    def stop(self) -> None:
        stop_process(self.proc)


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "runs.db")


@pytest.fixture
async def runs(db: str) -> AsyncIterator[SqlRunStore]:
    async with opened_store(db) as store:
        yield store


@pytest.fixture
def workers(db: str, tmp_path: Path) -> Iterator[list[Worker]]:
    """Start workers with `spawn(name)`; every one is stopped after the test."""
    started_: list[Worker] = []
    yield started_
    for worker in started_:
        worker.stop()


async def spawn(workers: list[Worker], db: str, tmp: Path, name: str, model_url: str = "") -> Worker:
    """A worker with the support desk and the A2A tests' tools, its `openai:local` model the FakeProvider's."""
    env = {**FAST_CANCEL, "OPENAI_BASE_URL": model_url, "OPENAI_API_KEY": "test"} if model_url else FAST_CANCEL
    worker = start_worker(db, tmp / f"{name}.log", servers=[support_server(tmp), TOOLS], env_extra=env)
    workers.append(worker)
    await await_until(lambda: started(worker), f"worker {name} to start", timeout_s=60)
    return worker


@asynccontextmanager
async def holding(
    workers: list[Worker], db: str, tmp: Path, model_url: str, hold: Path
) -> AsyncIterator[tuple[Client, Task, Worker]]:
    """Worker w1 on the FakeProvider at `model_url`, a fleet door, an A2A client of it, and a task whose run calls
    `hold` (it holds until the test writes the file), once the worker's call started; the door stops after."""
    worker = await spawn(workers, db, tmp, "w1", model_url)
    door = Door(tmp, "openai:local", server="tools")
    try:
        async with a2a_client(door.url, ALICE) as client:
            task: Task = await send(client, f"call hold {json.dumps({'path': str(hold)})}", now=True)
            await await_until(anyio.Path(f"{hold}.started").exists, "the worker to call hold", proc=worker.proc)
            yield client, task, worker
    finally:
        door.stop()


async def until_task(client: object, task_id: str, states: set[TaskState], what: str) -> Task:
    async def reached() -> Task | None:
        task: Task = await client.get_task(GetTaskRequest(id=task_id))  # type: ignore[attr-defined]
        return task if task.status.state in states else None

    found: Task = await await_until(reached, what, timeout_s=120)
    return found


async def test_a_task_is_driven_by_a_worker_and_its_approval_answered_through_a2a_wakes_the_fleet(
    db: str, runs: SqlRunStore, workers: list[Worker], tmp_path: Path
) -> None:
    await spawn(workers, db, tmp_path, "w1")
    door = Door(tmp_path, "scripted:support_demo")
    try:
        async with a2a_client(door.url, ALICE) as client:
            task = await send(client, "Refund one item of order A123")
            assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, said(task)
            assert "issue_refund" in said(task)
            done = await send(client, "approve", task_id=task.id)
    finally:
        door.stop()
    assert done.status.state == TaskState.TASK_STATE_COMPLETED, said(done)
    assert "Refunded one" in done.artifacts[0].parts[0].text
    run = await runs.load(task.id)
    assert run.status == "done"
    assert support_db(tmp_path, task.id).exists()  # the worker's support server (its servers file) did the refund
    fleet = FleetClient(db)
    try:
        legs = {w.workflow_id: w.status for w in fleet.legs(task.id)}
    finally:
        fleet.close()
    woken = [leg for leg in legs if leg.startswith(task.id + "@")]  # the leg the A2A approval enqueued
    assert legs[task.id] == "SUCCESS" and len(woken) == 1 and legs[woken[0]] == "SUCCESS", legs
    assert "support" not in door.log.read_text().lower().replace("--fleet-server support", "")


async def test_a_worker_killed_midrun_is_taken_over_and_the_a2a_client_gets_the_answer(
    db: str, runs: SqlRunStore, workers: list[Worker], tmp_path: Path
) -> None:
    hold = tmp_path / "hold"
    with FakeProvider(tool_turns) as model:
        async with holding(workers, db, tmp_path, model.openai_url, hold) as (client, task, first):
            await anyio.Path(f"{hold}.started").unlink()
            first.kill9()
            second = await spawn(workers, db, tmp_path, "w2", model.openai_url)
            await await_until(
                lambda: "took over" in second.log.read_text(), "w2 to take the run over", proc=second.proc
            )
            hold.write_text("go")
            done = await until_task(client, task.id, {TaskState.TASK_STATE_COMPLETED}, "the run to end on w2")
    assert said(done).startswith("done: "), said(done)
    assert done.artifacts[0].parts[0].text == said(done)
    run = await runs.load(task.id)
    assert run.status == "done" and str(first.proc.pid) in second.log.read_text()


async def test_cancel_stops_the_run_on_the_worker(
    db: str, runs: SqlRunStore, workers: list[Worker], tmp_path: Path
) -> None:
    with FakeProvider(tool_turns) as model:
        async with holding(workers, db, tmp_path, model.openai_url, tmp_path / "hold") as (client, task, worker):
            canceled = await client.cancel_task(CancelTaskRequest(id=task.id))
            assert canceled.status.state == TaskState.TASK_STATE_CANCELED, said(canceled)
            got = await client.get_task(GetTaskRequest(id=task.id))
            assert got.status.state == TaskState.TASK_STATE_CANCELED
    run = await runs.load(task.id)
    assert (run.status, run.stop_reason, run.pending) == ("stopped", "canceled", [])
    await await_until(
        lambda: "its workflow was cancelled" in worker.log.read_text(), "the worker to stop the run", timeout_s=30
    )
    fleet = FleetClient(db)
    try:
        assert {w.status for w in fleet.legs(task.id)} == {"CANCELLED"}
    finally:
        fleet.close()


def test_a_fleet_door_refuses_a_server_command(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    for option in (["--server", f"touch {marker}"], ["--server-url", "http://127.0.0.1:9/mcp"]):
        done = subprocess.run(
            [TOOLWIRE, "agent", "serve", "--a2a", "--fleet", "--model", "scripted:support_demo", *option,
             "--db", str(tmp_path / "runs.db"), "--port", str(free_port())],
            env=clean_env(), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert "--fleet-server NAME" in done.stderr and "Traceback" not in done.stderr
    named = subprocess.run(
        [TOOLWIRE, "agent", "serve", "--a2a", "--fleet", "--model", "scripted:support_demo",
         "--fleet-server", f"touch {marker}", "--db", str(tmp_path / "runs.db")],
        env=clean_env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert named.returncode == 2 and "never a command or a URL" in named.stderr and "Traceback" not in named.stderr
    assert not marker.exists()


async def test_a_caller_cannot_name_a_server_command_for_the_workers(
    db: str, runs: SqlRunStore, workers: list[Worker], tmp_path: Path
) -> None:
    """Whatever a caller puts beside its task (metadata, a data part naming servers), the run the door submits
    names only the workers' servers, and the worker starts only its servers file's."""
    marker = tmp_path / "ran"
    hostile = Struct()
    hostile.update({"servers": [{"name": "support", "command": ["touch", str(marker)]}], "config": {"x": 1}})
    await spawn(workers, db, tmp_path, "w1")
    door = Door(tmp_path, "scripted:recovers")
    try:
        async with a2a_client(door.url, ALICE) as client:
            sent = Message(message_id="m-hostile", role=Role.ROLE_USER, parts=[Part(text="What does order A123 cost?")])
            sent.metadata.CopyFrom(hostile)
            sent.parts.append(Part(data=_value(hostile)))
            events = [e async for e in client.send_message(SendMessageRequest(message=sent))]
            task = events[-1].task
    finally:
        door.stop()
    assert task.status.state == TaskState.TASK_STATE_COMPLETED, said(task)
    run = await runs.load(task.id)
    assert [s["name"] for s in run.config["servers"]] == ["support"]
    assert all(not s.get("command") and not s.get("url") for s in run.config["servers"]), run.config["servers"]
    assert not marker.exists()


def _value(struct: Struct) -> "object":
    from google.protobuf.struct_pb2 import Value

    value = Value()
    value.struct_value.CopyFrom(struct)
    return value
