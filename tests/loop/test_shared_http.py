"""SharedConnections over Streamable HTTP: runs of one process that use the same tool server URL share one httpx
connection pool (the server sees their calls come on the same TCP connection), each call still says whose it is
(run id and idempotency key in `_meta`), and a server that is killed and started again on the same port lets every
run's later calls go on."""

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2

from helpers.polling import await_until
from helpers.replicas import asks_whoami
from helpers.servers import free_port, stop_process
from loop.test_shared_connections import Paused
from toolwire_client.assembly.sources import build_sources
from toolwire_client.config import ServerSpec
from toolwire_client.loop import Agent
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.run.state import RunState
from toolwire_client.tools.shared_connections import SharedConnections
from toolwire_client.tools.toolbox import ToolBox, idempotency_key
from toolwire_shared.messages import ToolResultMessage
from toolwire_shared.tools import IDEMPOTENCY_KEY_META, RUN_ID_META

REPO = Path(__file__).resolve().parents[2]


def start(port: int) -> "subprocess.Popen[bytes]":
    argv = [sys.executable, "tests/loop/meta_server.py", "--http", str(port)]
    return subprocess.Popen(argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def ready(port: int, proc: "subprocess.Popen[bytes]") -> None:
    """Until the server answers HTTP at all (MCPServer has no health route: any status will do)."""

    async def answers() -> bool:
        try:
            async with httpx2.AsyncClient(timeout=2) as http:
                await http.get(f"http://127.0.0.1:{port}/mcp")
            return True
        except httpx2.TransportError:
            return False

    await await_until(answers, f"the meta server on port {port} to answer", timeout_s=30, interval_s=0.05, proc=proc)


@contextmanager
def served() -> Iterator[tuple[int, list["subprocess.Popen[bytes]"]]]:
    """The meta server on a free port; the list holds its process (a test may replace it), all stopped at the end."""
    port = free_port()
    procs = [start(port)]
    try:
        yield port, procs
    finally:
        for proc in procs:
            stop_process(proc)


async def run(port: int, model: ScriptedModel) -> tuple[RunState, list[dict[str, Any]]]:
    spec = ServerSpec(name="meta", url=f"http://127.0.0.1:{port}/mcp")
    state = await Agent(model, ToolBox(build_sources([spec]))).run("Who answers?")
    results = [m for m in state.messages if isinstance(m, ToolResultMessage)]
    assert state.status == "done" and not [m.content for m in results if m.is_error], state.messages
    return state, [json.loads(m.content) for m in results]


async def test_runs_share_one_http_connection_and_each_call_says_whose_it_is() -> None:
    with served() as (port, procs):
        await ready(port, procs[0])
        alone = [await run(port, asks_whoami(2)) for _ in range(2)]  # no pool: a connection pool per run
        assert alone[0][1][0]["peer"] != alone[1][1][0]["peer"]
        async with SharedConnections() as pool:
            one_by_one = [await run(port, asks_whoami(2)) for _ in range(3)]
            together: list[tuple[RunState, list[dict[str, Any]]]] = []

            async def one() -> None:
                together.append(await run(port, asks_whoami(3)))

            async with anyio.create_task_group() as tg:
                for _ in range(4):
                    tg.start_soon(one)
            assert pool.connections == 1
    # runs one after another: every call of every run on the one kept-alive connection of the shared pool
    assert len({answer["peer"] for _, answers in one_by_one for answer in answers}) == 1
    for state, answers in one_by_one + together:
        for answer in answers:
            assert answer["meta"][RUN_ID_META] == state.run_id
            assert answer["meta"][IDEMPOTENCY_KEY_META] == idempotency_key(state.run_id, f"who{answer['turn']}")
    assert len({state.run_id for state, _ in together}) == 4


async def test_a_restarted_http_server_lets_every_run_go_on() -> None:
    with served() as (port, procs):
        await ready(port, procs[0])
        async with SharedConnections() as pool:
            models = [Paused(3) for _ in range(3)]
            runs: list[tuple[RunState, list[dict[str, Any]]]] = []

            async def one(model: ScriptedModel) -> None:
                runs.append(await run(port, model))

            async with anyio.create_task_group() as tg:
                for model in models:
                    tg.start_soon(one, model)
                for model in models:
                    await model.waiting.wait()  # every run has made its first call and waits before its second
                old = procs[0]
                old.send_signal(signal.SIGKILL)
                old.wait(timeout=10)
                procs.append(start(port))  # a new server on the same port
                await ready(port, procs[-1])
                for model in models:
                    model.go.set()
            assert pool.connections == 1
    assert len(runs) == 3
    for _, answers in runs:
        assert [a["turn"] for a in answers] == [0, 1, 2]  # every call answered, none failed (run() checks)
        assert answers[0]["pid"] == old.pid and answers[-1]["pid"] == procs[-1].pid
