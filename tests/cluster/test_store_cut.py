"""Scenario 3 of issue 38 in network namespaces: a tool-server replica (`toolwire serve --http --config`, in a
namespace of its own) whose limit counters and audit trail are the PostgreSQL of another is cut from it and healed.
Checked from the records: while cut, every call of an agent with a limit is refused (`limited`: the limits cannot be
counted, so the tool does not run), every call of an agent without one runs; after the heal the audit trail holds
exactly one record per call, those made while cut included (the writer kept them and wrote them once it could)."""

import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import psycopg
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from cluster.netns import Cluster
from helpers.polling import Bounds, await_until, wait_until
from helpers.server_config import POLICY_TOOLS, server_toml
from helpers.servers import text_of
from toolwire_shared.results import ERROR_KIND_META

pytestmark = [pytest.mark.postgres, pytest.mark.alone, pytest.mark.timeout(240)]

PORT = 8000
"""The replica's port in its own namespace (nothing else listens there)."""
CONFIG = server_toml(
    tools=POLICY_TOOLS,
    agents={"counted": ("tok-counted", ["echo"]), "free": ("tok-free", ["echo"])},
    limits=[{"agent": "counted", "per_minute": 6000, "burst": 1000}],
    tables={
        "store": {"postgres_env": "LIMITS_DB"},
        "audit": {"postgres_env": "LIMITS_DB", "flush_s": 0.2, "replica": "r1"},
    },
)
CALLS = 3
"""Calls of each agent before the cut, and again while cut."""


WORKERS = 1  # namespace w1 holds the replica, joined to PostgreSQL by link 1
"""How many worker namespaces the cluster fixture (conftest.py) makes."""


@asynccontextmanager
async def replica_client(socket: Path, token: str) -> AsyncIterator[Client]:
    transport = httpx2.AsyncHTTPTransport(uds=str(socket))
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(transport=transport, headers=headers, timeout=30) as http,
        Client(streamable_http_client(f"http://127.0.0.1:{PORT}/mcp", http_client=http), read_timeout_seconds=30) as c,
    ):
        yield c


async def calls(socket: Path, agent: str, count: int, outcomes: Counter[str]) -> None:
    """`count` echo calls of `agent`, one after another; each outcome counted ("ok", else its error kind)."""
    async with replica_client(socket, f"tok-{agent}") as client:
        for n in range(count):
            result = await client.call_tool("echo", {"text": f"{agent}-{n}"})
            if result.is_error:
                outcomes[(result.meta or {}).get(ERROR_KIND_META, "tool_failed")] += 1
            else:
                assert text_of(result) == f"{agent}-{n}"
                outcomes["ok"] += 1


def audited(url: str) -> Counter[tuple[str, str]]:
    """(agent, outcome) of every audit record."""
    with psycopg.connect(url, autocommit=True) as conn:
        exists = conn.execute("SELECT to_regclass('toolwire_audit') IS NOT NULL").fetchone()
        if not exists or not exists[0]:
            return Counter()
        return Counter(conn.execute("SELECT agent, outcome FROM toolwire_audit").fetchall())


def replica_answers(socket: Path) -> bool:
    try:
        transport = httpx2.HTTPTransport(uds=str(socket))
        with httpx2.Client(transport=transport, timeout=2) as http:
            return http.get(f"http://127.0.0.1:{PORT}/healthz").status_code == 200
    except httpx2.TransportError:
        return False


@pytest.mark.parametrize("silent", [True, False], ids=["silent-cut", "fast-cut"])
async def test_a_replica_cut_from_its_limits_and_audit_store(cluster: Cluster, tmp_path: Path, silent: bool) -> None:
    config = tmp_path / "server.toml"
    config.write_text(CONFIG)
    log = tmp_path / "replica.log"
    env = {
        "LIMITS_DB": cluster.worker_url(1),
        "TOOLWIRE_DB_CONNECT_TIMEOUT_S": "2",
        "TOOLWIRE_DB_UNACKED_TIMEOUT_S": "2",
    }
    argv = [sys.executable, "-m", "toolwire_server", f"--config={config}", "--http", "--host", "127.0.0.1"]
    replica = cluster.start(1, [*argv, "--port", str(PORT)], log, env)
    socket = cluster.bridge(1, PORT)
    watched: Bounds = {"proc": replica, "log": log}
    wait_until(lambda: replica_answers(socket), "the replica to answer", timeout_s=60, interval_s=0.1, **watched)

    before: dict[str, Counter[str]] = {"counted": Counter(), "free": Counter()}
    for agent, outcomes in before.items():
        await calls(socket, agent, CALLS, outcomes)
    assert before == {"counted": Counter(ok=CALLS), "free": Counter(ok=CALLS)}
    await await_until(lambda: sum(audited(cluster.url).values()) == 2 * CALLS, "the first records", timeout_s=30)

    cluster.cut(1, silent=silent)
    cut_at = time.monotonic()
    during: dict[str, Counter[str]] = {"counted": Counter(), "free": Counter()}
    for agent, outcomes in during.items():
        await calls(socket, agent, CALLS, outcomes)
    wait_until(lambda: "audit: writing" in log.read_text(), "the audit writer to fail", timeout_s=60, **watched)
    cluster.heal(1)
    healed_at = time.monotonic()

    def all_written() -> bool:
        return sum(audited(cluster.url).values()) >= 4 * CALLS

    await await_until(all_written, "every queued record written after the heal", timeout_s=60, **watched)
    print(
        f"\n{'silent' if silent else 'fast'} cut: {time.monotonic() - healed_at:.1f} s from the heal to the last "
        f"record written; cut for {healed_at - cut_at:.1f} s"
    )
    assert during == {"counted": Counter(limited=CALLS), "free": Counter(ok=CALLS)}, log.read_text()
    records = audited(cluster.url)
    assert records == Counter({("counted", "ok"): CALLS, ("counted", "limited"): CALLS, ("free", "ok"): 2 * CALLS}), (
        log.read_text()
    )
