"""Limits and the audit trail on a real `toolwire serve --http --config FILE`: three agents with different limits
call at once, each stays within its own; after SIGTERM the audit has exactly one record per call that reached the
server, and `toolwire audit` shows them. On PostgreSQL: two replicas share one limit and one audit table."""

import json
import signal
import subprocess
import uuid
from collections import Counter
from pathlib import Path

import anyio
import httpx2
import pytest
from click.testing import CliRunner, Result

from helpers.cli import clean_env, run_toolwire
from helpers.postgres import fresh_database, postgres_url
from helpers.server_config import POLICY_TOOLS, server_toml
from helpers.servers import REPO, HttpServer, http_client, serve_argv, stop_process
from toolwire_client.cli import main
from toolwire_server.policy.audit import read_records
from toolwire_shared.results import ERROR_KIND_META

__all__ = ["postgres_url"]

CONFIG = server_toml(
    tools=POLICY_TOOLS,
    agents={
        "capped": ("tok-capped", ["*"]),
        "quota": ("tok-quota", ["echo", "get_order"]),
        "free": ("tok-free", ["echo"]),
    },
    limits=[{"agent": "capped", "per_minute": 1, "burst": 5}, {"agent": "quota", "tool": "echo", "per_day": 8}],
)
CHATTY = server_toml(
    agents={"chatty": ("tok-chatty", ["echo"])}, request_limits=[{"agent": "chatty", "per_minute": 1, "burst": 2}]
)
CALLS = 15


async def _hammer(url: str, token: str, calls: int, outcomes: Counter[str]) -> None:
    """`calls` echo calls, five at a time, as fast as the server answers; counts how each ended."""
    async with http_client(url, token=token) as client:

        async def some(n: int) -> None:
            for _ in range(n):
                result = await client.call_tool("echo", {"text": "hi"})
                outcomes[(result.meta or {}).get(ERROR_KIND_META, "ok") if result.is_error else "ok"] += 1

        async with anyio.create_task_group() as tg:
            for share in [calls // 5] * 5:
                tg.start_soon(some, share)


def _toolwire(*args: str) -> Result:
    """The `toolwire` command itself, run in this process (the CLI's own code; no interpreter start per call)."""
    return CliRunner().invoke(main, list(args))


def test_serve_check_says_ok_or_names_the_mistake_in_one_line(tmp_path: Path) -> None:
    good = tmp_path / "server.toml"
    good.write_text(CONFIG + "[audit]\nsqlite = 'audit.db'\n")
    done = _toolwire("check", str(good))
    assert done.exit_code == 0, done.output
    assert done.stdout.strip() == f"{good}: ok: 4 tools, 3 agents, 2 limit rules, audit on"
    bad = tmp_path / "bad.toml"
    bad.write_text(CONFIG.replace("per_minute = 1", "per_minute = -1"))
    done = run_toolwire("check", str(bad), env=clean_env())  # as a user runs it: no traceback
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"Error: {bad}: limits[0].per_minute: input should be greater than 0 (got -1)"
    ]


async def test_three_agents_each_within_their_limit_and_every_call_audited(tmp_path: Path) -> None:
    config = tmp_path / "server.toml"
    audit = "[audit]\nsqlite = 'audit.db'\nflush_s = 60\nbatch = 100000\n"  # written only at shutdown
    config.write_text(CONFIG + CHATTY + audit)
    outcomes: dict[str, Counter[str]] = {agent: Counter() for agent in ("capped", "quota", "free")}
    with HttpServer(f"--config={config}", env=clean_env()) as server:
        async with anyio.create_task_group() as tg:
            for agent, counts in outcomes.items():
                tg.start_soon(_hammer, server.url, f"tok-{agent}", CALLS, counts)
        async with httpx2.AsyncClient(headers={"authorization": "Bearer tok-chatty"}) as http:
            answers = [await http.post(server.url, json={}) for _ in range(3)]
    assert [a.status_code != 429 for a in answers] == [True, True, False]  # a burst of 2 requests
    assert 1 <= int(answers[2].headers["retry-after"]) <= 60
    assert answers[2].json()["message"].startswith("agent chatty: 1 requests per minute; next allowed in ")
    # the server has stopped (SIGTERM): whatever the writer still held was written on the way out
    assert outcomes["capped"]["ok"] in (5, 6)  # the bucket of 5, plus at most one refill in the test's seconds
    assert outcomes["quota"] == Counter(ok=8, limited=7)
    assert outcomes["free"] == Counter(ok=CALLS)
    records = read_records(str(tmp_path / "audit.db"))
    assert len(records) == 3 * CALLS
    for agent, counts in outcomes.items():
        assert Counter(r["outcome"] for r in records if r["agent"] == agent) == counts
    shown = _toolwire(
        "audit", "--config", str(config), "--agent", "quota", "--outcome", "limited", "--since", "1h", "--json"
    )
    assert shown.exit_code == 0, shown.output
    listed = json.loads(shown.stdout)
    assert [(r["agent"], r["tool"], r["outcome"]) for r in listed] == [("quota", "echo", "limited")] * 7
    table = _toolwire("audit", "--db", str(tmp_path / "audit.db"), "--agent", "free")
    assert table.exit_code == 0 and table.stdout.count(" free ") == CALLS, table.output


def test_audit_cli_mistakes_are_one_line(tmp_path: Path) -> None:
    missing = _toolwire("audit", "--db", str(tmp_path / "none.db"))
    assert missing.exit_code == 1 and "cannot read the audit trail in" in missing.output
    span = _toolwire("audit", "--db", "x.db", "--since", "yesterday")
    assert span.exit_code == 2 and "a span such as 90s, 15m, 1h or 7d" in span.output
    neither = _toolwire("audit")
    assert neither.exit_code == 2 and "give --config FILE (the server's configuration) or --db" in neither.output


@pytest.mark.postgres
async def test_two_replicas_share_one_limit_and_one_audit_on_postgres(tmp_path: Path, postgres_url: str) -> None:
    database = fresh_database(postgres_url, f"t_{uuid.uuid4().hex[:12]}")
    config = tmp_path / "server.toml"
    shared = "[store]\npostgres_env = 'LIMITS_DB'\n[audit]\npostgres_env = 'LIMITS_DB'\n"
    config.write_text(CONFIG.replace("burst = 5", "burst = 10") + shared)
    env = clean_env(LIMITS_DB=database)
    outcomes: list[Counter[str]] = [Counter(), Counter(), Counter()]
    with (
        HttpServer(f"--config={config}", "--replica", "r1", env=env) as one,
        HttpServer(f"--config={config}", "--replica", "r2", env=env) as two,
    ):
        async with anyio.create_task_group() as tg:
            tg.start_soon(_hammer, one.url, "tok-capped", 20, outcomes[0])
            tg.start_soon(_hammer, two.url, "tok-capped", 20, outcomes[1])
            tg.start_soon(_hammer, two.url, "tok-free", 10, outcomes[2])
    capped = outcomes[0] + outcomes[1]
    assert capped["ok"] in (10, 11) and capped["ok"] + capped["limited"] == 40  # one bucket for both replicas
    assert outcomes[2] == Counter(ok=10)
    records = read_records(database)
    assert len(records) == 50
    assert Counter(r["outcome"] for r in records if r["agent"] == "capped") == capped
    assert {r["replica"] for r in records} == {"r1", "r2"}


def test_stdio_writes_its_audit_on_sigterm(tmp_path: Path) -> None:
    config = tmp_path / "server.toml"
    config.write_text(CONFIG + "[audit]\nsqlite = 'audit.db'\nflush_s = 60\nbatch = 100000\n")
    argv = serve_argv(f"--config={config}", "--stdio", "--agent", "free")
    proc = subprocess.Popen(argv, cwd=REPO, env=clean_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        messages: list[dict[str, object]] = [
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ]
        messages += [
            {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}}
            for n in (1, 2, 3)
        ]
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if "id" in message:
                assert json.loads(proc.stdout.readline())["id"] == message["id"]
        proc.terminate()  # stdin stays open: only the signal ends it
        assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        stop_process(proc)
    assert [r["outcome"] for r in read_records(str(tmp_path / "audit.db"))] == ["ok"] * 3
