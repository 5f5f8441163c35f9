"""`toolwire serve --http --workers 3`: one port served by three processes. Stateless agents are answered by more
than one of them; a legacy client is refused with the reason; a worker that dies is reported and replaced; SIGTERM
or SIGINT stops the supervisor and every worker."""

import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from helpers.polling import await_until, wait_until
from helpers.replicas import REPLICA_TOOLS, whoami_run
from helpers.servers import REPO, HttpServer, free_port, serve_argv
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.source import ToolServerFailed

TOKEN = "tok-workers-0b7c"
BROKEN_IN_WORKERS = REPLICA_TOOLS.replace(":registry", ":broken_in_workers")


def worker_pids(parent: int) -> set[int]:
    """The live worker processes `parent` spawned (multiprocessing's spawn_main; not its resource tracker)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat, cmdline = (entry / "stat").read_text(), (entry / "cmdline").read_bytes()
        except OSError:  # ended meanwhile
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        if ppid == parent and b"spawn_main" in cmdline:  # a zombie has no cmdline
            found.add(int(entry.name))
    return found


def workers_once(parent: int, ok: Callable[[set[int]], bool]) -> Callable[[], set[int] | None]:
    """A check for wait_until: the worker pids once `ok` holds for them."""

    def check() -> set[int] | None:
        pids = worker_pids(parent)
        return pids if ok(pids) else None

    return check


def three_workers(server: HttpServer) -> set[int]:
    assert server.proc is not None
    parent = server.proc.pid
    return wait_until(
        workers_once(parent, lambda pids: len(pids) == 3),
        "three worker processes",
        timeout_s=30,
        proc=server.proc,
        log=server.stderr_path,
        detail=lambda: f"workers: {sorted(worker_pids(parent))}",
    )


def start(tmp_path: Path) -> HttpServer:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(f'[agents.tester]\ntoken = "{TOKEN}"\ntools = ["*"]\n')
    return HttpServer(REPLICA_TOOLS, "--workers", "3", "--tokens", str(tokens))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    with start(tmp_path_factory.mktemp("workers")) as running:
        yield running


async def test_stateless_agents_are_served_by_several_workers(server: HttpServer) -> None:
    workers = three_workers(server)
    answered: set[int] = set()

    async def another_agent() -> bool:
        # a fresh connection each run: the kernel hands it to whichever worker accepts first
        answers = await whoami_run(server.url, token=TOKEN, mode="auto", times=2)
        answered.update(int(a.partition(":")[2]) for a in answers)
        return len(answered) > 1

    await await_until(another_agent, "a second worker to answer", timeout_s=60, detail=lambda: f"{answered}")
    assert answered <= workers


async def test_a_legacy_client_is_refused_with_the_reason(server: HttpServer) -> None:
    source = McpSource("workers", url=server.url, token=TOKEN, mode="legacy")
    with pytest.raises(ToolServerFailed) as refused:
        await source.start()
    assert "HTTP 400 Bad Request: this tool server runs 3 processes on one port" in str(refused.value)
    assert "deploy/nginx.conf" in str(refused.value)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_a_dead_worker_is_replaced_and_a_signal_stops_them_all(stop: signal.Signals, tmp_path: Path) -> None:
    with start(tmp_path) as server:
        assert server.proc is not None
        parent = server.proc.pid
        before = three_workers(server)
        victim = min(before)
        os.kill(victim, signal.SIGKILL)
        after = wait_until(
            workers_once(parent, lambda pids: len(pids) == 3 and victim not in pids),
            "a replacement worker",
            timeout_s=30,
            proc=server.proc,
            log=server.stderr_path,
        )
        (replacement,) = after - before
        said = f"worker process {victim} ended or stopped answering (killed by signal 9); started {replacement} in"
        # The supervisor says so once its round is over: after it has also health-checked the other workers.
        wait_until(lambda: said in server.stderr(), "the replacement's warning line", timeout_s=30, proc=server.proc)
        assert len(await whoami_run(server.url, token=TOKEN, mode="auto", times=2)) == 2
        server.proc.send_signal(stop)
        assert server.proc.wait(timeout=30) == 0, server.stderr()
        wait_until(lambda: not any(_running(p) for p in after), "every worker to end", timeout_s=10)


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def test_workers_that_cannot_start_stop_the_server_with_the_reason() -> None:
    """Not restarted over and over: the supervisor stops, and says why, in a line."""
    argv = serve_argv(BROKEN_IN_WORKERS, "--http", "--port", str(free_port()), "--workers", "2")
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 1, done.stderr
    where = "tests/server/replica_tools.py line 61: RuntimeError"  # the user's file and line, then the error
    assert f"cannot start: {where}: this registry cannot be loaded in a worker process" in done.stderr
    assert done.stderr.rstrip().endswith("Error: a worker process failed to start (its error is above); stopped")
    assert "Traceback" not in done.stderr
