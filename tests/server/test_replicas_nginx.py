"""Three tool-server replicas on their own 127.0.0.1 ports behind Debian's nginx running the shipped
deploy/nginx.conf, with agents (toolwire's loop, scripted model, HTTP McpSource) run through it in both eras:
stateless 2026-07-28 calls are spread over the replicas; each legacy session stays on the replica that opened it and
all of its calls succeed."""

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Literal

import anyio
import httpx2
import pytest

from helpers.nginx import NGINX, Nginx, deploy_site
from helpers.replicas import REPLICA_TOOLS, whoami_run
from helpers.servers import HttpServer, free_port, http_client, text_of, wait_for_file

pytestmark = [
    pytest.mark.nginx,
    pytest.mark.alone,  # round robin is strict only while no replica is too slow to answer nginx
    pytest.mark.skipif(NGINX is None, reason="no nginx binary (Debian: apt-get install nginx)"),
]
NAMES = ("r1", "r2", "r3")
TOKEN = "tok-replicas-5d1e"


class Deployment:
    def __init__(self, replicas: list[HttpServer], nginx: Nginx) -> None:
        self.replicas, self.nginx = replicas, nginx
        self.url = nginx.base + "/mcp"


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    tmp = tmp_path_factory.mktemp("replicas")
    tokens = tmp / "tokens.toml"
    tokens.write_text(f'[agents.tester]\ntoken = "{TOKEN}"\ntools = ["*"]\n')
    with ExitStack() as stack:
        replicas = [
            stack.enter_context(
                HttpServer(
                    REPLICA_TOOLS, "--replica", name, "--tokens", str(tokens), env={"TOOLWIRE_TEST_REPLICA": name}
                )
            )
            for name in NAMES
        ]
        port = free_port()
        nginx = stack.enter_context(Nginx(deploy_site([r.port for r in replicas], port), tmp / "nginx", port))
        yield Deployment(replicas, nginx)


def replica_of(answer: str) -> str:
    return answer.partition(":")[0]


async def test_stateless_calls_are_spread_round_robin(deployment: Deployment) -> None:
    answers = await whoami_run(deployment.url, token=TOKEN, mode="auto", times=6)
    # Round-robin per request: six calls in a row meet every replica, twice each.
    assert sorted(replica_of(a) for a in answers) == sorted(NAMES * 2), answers


async def test_concurrent_stateless_agents_all_succeed(deployment: Deployment) -> None:
    answers: list[str] = []

    async def agent() -> None:
        answers.extend(await whoami_run(deployment.url, token=TOKEN, mode="auto", times=4))

    async with anyio.create_task_group() as tg:
        for _ in range(4):
            tg.start_soon(agent)
    assert len(answers) == 16 and {replica_of(a) for a in answers} == set(NAMES)


async def test_each_legacy_session_stays_on_its_replica(deployment: Deployment) -> None:
    sessions: list[list[str]] = []

    async def agent() -> None:
        sessions.append(await whoami_run(deployment.url, token=TOKEN, mode="legacy", times=5))

    async with anyio.create_task_group() as tg:
        for _ in range(3):
            tg.start_soon(agent)
    for answers in sessions:  # one process answered all of a session's calls (and none failed: whoami_run checks)
        assert len(set(answers)) == 1, sessions
    # The three initialize requests went round-robin, so each replica opened one of the sessions.
    assert sorted(replica_of(a[0]) for a in sessions) == sorted(NAMES), sessions
    log = deployment.nginx.access_log()
    for name, replica in zip(NAMES, deployment.replicas, strict=True):
        routed = [line for line in log.splitlines() if f"session={name}." in line]
        assert routed and all(f"upstream=127.0.0.1:{replica.port}" in line for line in routed), routed[:3]


def test_a_session_id_names_the_replica_that_issued_it(deployment: Deployment, tmp_path: Path) -> None:
    """The routing's premise, on the wire: the id an initialize gets starts with the answering replica's name, and
    that replica alone knows the session (another one answers 404)."""
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {TOKEN}",
    }
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    opened = httpx2.post(deployment.url, json=initialize, headers=headers, timeout=10)
    assert opened.status_code == 200
    session_id = opened.headers["mcp-session-id"]
    name, _, sdk_id = session_id.partition(".")
    assert name in NAMES and sdk_id
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    for replica_name, replica in zip(NAMES, deployment.replicas, strict=True):
        direct = httpx2.post(replica.url, json=ping, headers={**headers, "Mcp-Session-Id": session_id}, timeout=10)
        assert direct.status_code == (200 if replica_name == name else 404), (replica_name, direct.text)
    closed = httpx2.delete(deployment.url, headers={**headers, "Mcp-Session-Id": session_id}, timeout=10)
    assert closed.status_code < 300


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_client_going_away_cancels_the_tool_on_its_replica(
    deployment: Deployment, mode: Literal["auto", "legacy"], tmp_path: Path
) -> None:
    """Through nginx too: unbuffered, so when the client's connection drops nginx drops the replica's, and the
    replica cancels the call."""
    marker = str(tmp_path / "held")
    async with anyio.create_task_group() as tg:

        async def call_then_vanish() -> None:
            async with http_client(deployment.url, token=TOKEN, mode=mode) as client:
                await client.call_tool("hold", {"marker": marker})

        tg.start_soon(call_then_vanish)
        await wait_for_file(Path(marker + ".started"))
        tg.cancel_scope.cancel()
    await wait_for_file(Path(marker + ".cancelled"))
    started = await anyio.Path(marker + ".started").read_text()
    assert await anyio.Path(marker + ".cancelled").read_text() == started  # the replica that ran it cancelled it


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_progress_reaches_the_client_while_the_call_runs(
    deployment: Deployment, mode: Literal["auto", "legacy"], tmp_path: Path
) -> None:
    """Server-sent events pass nginx unbuffered: the tool waits for the client to have seen its progress."""
    release = tmp_path / "release"
    seen: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message)
        await anyio.Path(release).write_text("seen")

    async with http_client(deployment.url, token=TOKEN, mode=mode) as client:
        result = await client.call_tool("progress_then_wait", {"release": str(release)}, progress_callback=on_progress)
    assert text_of(result) == "released" and seen == ["halfway"]
