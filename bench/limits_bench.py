"""Limits, quotas and the audit trail (issue 25): what they cost and whether they are fair.

1. CPU per call with limits and audit on vs off: in-process through the server's call pipeline (`pipeline.call`: the
   worst case, nothing else to hide the cost), and on a real `toolwire serve --http --config` (server process CPU).
2. Fairness: an agent making sequential calls, alone and beside a hog in its own process (8 loops as fast as the
   server answers) that is at its limit (60 per minute) and ignores the wait, that is at its limit and waits what
   the refusal says (as toolwire's ToolBox does), that is at a request limit (raw POSTs answered 429), and that has
   no limit: the calm agent's calls/s and median.
3. One limit check in PostgreSQL (one UPSERT) vs in-process: median and p99 latency.
4. A call through the gateway (`[upstreams.NAME]`) vs directly to the upstream, same run, alternating rounds: a
   small toolwire server of our own over HTTP (median latency, and the CPU of every server process per call), and
   mcp-server-time (direct over stdio; through the gateway over HTTP, its link to the upstream stdio: latency only).

    .venv/bin/python -m bench.limits_bench [--calls N] [--parts cpu,http,fairness,postgres,gateway]
"""

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2
from bench.proc_cpu import cpu_s, tree_cpu_s
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from helpers.postgres import fresh_database, start_postgres, stop_postgres  # noqa: E402
from helpers.server_config import POLICY_TOOLS, server_toml  # noqa: E402
from helpers.servers import HttpServer  # noqa: E402
from toolwire_server.auth.access import Grant  # noqa: E402
from toolwire_server.policy.config import LimitRule  # noqa: E402
from toolwire_server.policy.counting import Counters, MemoryCounters  # noqa: E402
from toolwire_server.policy.postgres_counters import PostgresCounters  # noqa: E402
from toolwire_server.tools.pipeline import call  # noqa: E402
from toolwire_server.tools.request import CallRequest  # noqa: E402
from toolwire_server.transports.processes import ServeSpec  # noqa: E402
from toolwire_shared.results import RETRY_AFTER_META  # noqa: E402

TOOLS = server_toml(tools=POLICY_TOOLS)
AGENTS = server_toml(agents={name: (f"tok-{name}", ["*"]) for name in ("calm", "hog", "wild", "spammer")})
GENEROUS = server_toml(
    limits=[{"agent": "calm", "per_minute": 1_000_000, "burst": 1_000_000, "in_flight": 1000, "per_day": 1_000_000_000}]
)
HOG_LIMIT = server_toml(
    limits=[{"agent": "hog", "per_minute": 60, "burst": 1}],
    request_limits=[{"agent": "spammer", "per_minute": 60, "burst": 1}],
)
AUDIT = "[audit]\nsqlite = 'audit.db'\n"


def _config(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(TOOLS + AGENTS + body)
    return path


async def in_process_cpu(folder: Path, calls: int) -> dict[str, float]:
    """CPU µs per call through the call pipeline, policy off vs limits (one matching rule of each kind) and audit on;
    the audit's writer thread counts (process time covers every thread; the last batch is written inside the window)."""
    out: dict[str, float] = {}
    calm = Grant(agent="calm", patterns=("*",))
    for label, body in (("off", ""), ("on", GENEROUS + AUDIT)):
        registry, _ = ServeSpec("", config_file=str(_config(folder, f"inproc-{label}.toml", body))).load()
        best = float("inf")
        for _ in range(3):
            for i in range(200):
                await call(CallRequest(registry, calm, "echo", {"text": f"w{i}"}, max_result_chars=10_000))
            start = time.process_time()
            for i in range(calls):
                await call(CallRequest(registry, calm, "echo", {"text": f"c{i}"}, max_result_chars=10_000))
            if registry.policy is not None and registry.policy.audit is not None:
                registry.policy.audit.close()
            best = min(best, (time.process_time() - start) / calls * 1e6)
        out[label] = best
    return out


async def _client_calls(url: str, token: str, calls: int) -> list[float]:
    latencies = []
    async with (
        httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        for i in range(calls):
            t0 = time.perf_counter()
            await client.call_tool("echo", {"text": str(i)})
            latencies.append(time.perf_counter() - t0)
    return latencies


def http_cpu(folder: Path, calls: int, rounds: int = 4) -> dict[str, float]:
    """Server process CPU µs per sequential call over HTTP, off vs on: both servers up at once, measured in
    alternating rounds (the machine's load drifts), the best round of each."""
    configs = {
        label: _config(folder, f"http-{label}.toml", body) for label, body in (("off", ""), ("on", GENEROUS + AUDIT))
    }
    best = {"off": float("inf"), "on": float("inf")}
    with HttpServer(f"--config={configs['off']}") as off, HttpServer(f"--config={configs['on']}") as on:
        servers = {"off": off, "on": on}
        for server in servers.values():
            asyncio.run(_client_calls(server.url, "tok-calm", 200))
        for _ in range(rounds):
            for label, server in servers.items():
                assert server.proc is not None
                before = cpu_s(server.proc.pid)
                asyncio.run(_client_calls(server.url, "tok-calm", calls))
                best[label] = min(best[label], (cpu_s(server.proc.pid) - before) / calls * 1e6)
    return best


async def _hammer(url: str, token: str, seconds: float, respect: bool | None) -> dict[str, int]:
    """In the hog's own process: 8 loops calling as fast as the server answers for `seconds`; with `respect`, a
    loop waits the `retry_after_s` a refusal names (what toolwire's ToolBox does) before its next call."""
    counts = {"admitted": 0, "refused": 0}
    deadline = time.perf_counter() + seconds
    if respect is None:  # raw POSTs of a tools/call: over a request limit, each is answered 429 before any MCP work
        return await _post_hammer(url, token, deadline, counts)
    async with (
        httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):

        async def loop() -> None:
            while time.perf_counter() < deadline:
                result = await client.call_tool("echo", {"text": "x"})
                counts["refused" if result.is_error else "admitted"] += 1
                wait = (result.meta or {}).get(RETRY_AFTER_META)
                if respect and result.is_error and isinstance(wait, int | float):
                    await asyncio.sleep(min(wait, max(0.0, deadline - time.perf_counter())))

        await asyncio.gather(*(loop() for _ in range(8)))
    return counts


async def _post_hammer(url: str, token: str, deadline: float, counts: dict[str, int]) -> dict[str, int]:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}}
    headers = {"authorization": f"Bearer {token}", "accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:

        async def loop() -> None:
            while time.perf_counter() < deadline:
                answer = await http.post(url, json=call)
                counts["refused" if answer.status_code == 429 else "admitted"] += 1

        await asyncio.gather(*(loop() for _ in range(8)))
    return counts


async def _calm_for(url: str, seconds: float) -> tuple[int, list[float]]:
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds
    async with (
        httpx2.AsyncClient(headers={"authorization": "Bearer tok-calm"}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        while time.perf_counter() < deadline:
            t0 = time.perf_counter()
            await client.call_tool("echo", {"text": "calm"})
            latencies.append(time.perf_counter() - t0)
    return len(latencies), latencies


def _calm_beside(url: str, pid: int, hog: list[str] | None, seconds: float) -> dict[str, float]:
    """The calm agent's sequential calls for `seconds`, with the hog (its own process) calling throughout; and the
    server's CPU per call it answered in that time."""
    proc = None
    if hog is not None:
        argv = [sys.executable, "-m", "bench.limits_bench", "--hog", url, *hog, "--seconds", str(seconds + 3)]
        proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, text=True)
        time.sleep(2)  # a bench, not a test: the hog's process starts and connects before the calm agent begins
    before = cpu_s(pid)
    calls, latencies = asyncio.run(_calm_for(url, seconds))
    server_cpu = cpu_s(pid) - before
    counts = json.loads(proc.communicate(timeout=60)[0]) if proc is not None else {"admitted": 0, "refused": 0}
    hog_calls = (counts["admitted"] + counts["refused"]) * seconds / (seconds + 3)  # its share in the window
    return {
        "calm_calls_s": calls / seconds,
        "calm_median_ms": statistics.median(latencies) * 1000,
        "hog_calls_s": hog_calls / seconds,
        "hog_admitted": counts["admitted"],
        "server_cpu_us_per_call": server_cpu / (calls + hog_calls) * 1e6,
    }


def fairness(folder: Path, seconds: float, rounds: int = 3) -> dict[str, dict[str, float]]:
    """Medians over `rounds` interleaved rounds of each case."""
    config = _config(folder, "fair.toml", GENEROUS + HOG_LIMIT + AUDIT)
    cases: list[tuple[str, list[str] | None]] = [
        ("alone", None),
        ("beside a hog at its limit that ignores the wait", ["tok-hog"]),
        ("beside a hog at its limit that waits (toolwire's client)", ["tok-hog", "--respect"]),
        ("beside a hog at its request limit (429)", ["tok-spammer", "--raw"]),
        ("beside a hog with no limit", ["tok-wild"]),
    ]
    runs: dict[str, list[dict[str, float]]] = {label: [] for label, _ in cases}
    with HttpServer(f"--config={config}") as server:
        assert server.proc is not None
        asyncio.run(_calm_for(server.url, 1.0))
        for _ in range(rounds):  # interleaved: the machine's load drifts between cases, not within one
            for label, hog in cases:
                runs[label].append(_calm_beside(server.url, server.proc.pid, hog, seconds))
    return {label: {key: statistics.median(r[key] for r in got) for key in got[0]} for label, got in runs.items()}


async def check_latency(postgres: str, checks: int) -> dict[str, dict[str, float]]:
    rule = LimitRule(agent="*", tool="*", per_minute=1e6, burst=10**6)
    out = {}
    stores: list[tuple[str, Counters]] = [("in-process", MemoryCounters()), ("postgresql", PostgresCounters(postgres))]
    for label, counters in stores:
        for _ in range(100):
            await counters.take("a", [(0, rule)])
        latencies = []
        for _ in range(checks):
            t0 = time.perf_counter()
            assert await counters.take("a", [(0, rule)]) is None
            latencies.append(time.perf_counter() - t0)
        await counters.aclose()
        latencies.sort()
        out[label] = {
            "median_us": statistics.median(latencies) * 1e6,
            "p99_us": latencies[int(len(latencies) * 0.99) - 1] * 1e6,
        }
    return out


TIME = REPO / ".venv-mcp-servers" / "bin" / "mcp-server-time"
OWN = f"{REPO}/tests/server/upstream_tools.py:registry"


async def _sequential(where: str | StdioServerParameters, tool: str, arguments: dict[str, Any], calls: int) -> float:
    """Median seconds of `calls` sequential calls (after 50 unmeasured), over HTTP with agent calm's token when
    `where` is a URL, else over stdio."""
    async with httpx2.AsyncClient(headers={"authorization": "Bearer tok-calm"}, timeout=30) as http:
        transport = streamable_http_client(where, http_client=http) if isinstance(where, str) else where
        async with Client(transport) as client:
            for _ in range(50):
                assert not (await client.call_tool(tool, arguments)).is_error
            latencies = []
            for _ in range(calls):
                t0 = time.perf_counter()
                await client.call_tool(tool, arguments)
                latencies.append(time.perf_counter() - t0)
    return statistics.median(latencies)


def gateway_overhead(folder: Path, calls: int, rounds: int = 3) -> dict[str, dict[str, float]]:
    """Through the gateway vs direct, best of `rounds` alternating rounds (the machine's load drifts)."""
    best: dict[str, dict[str, float]] = {
        "own_http": {"direct_ms": 1e9, "gateway_ms": 1e9, "direct_cpu_us": 1e9, "gateway_cpu_us": 1e9},
        "time": {"direct_ms": 1e9, "gateway_ms": 1e9},
    }
    time_direct = StdioServerParameters(command=str(TIME), args=["--local-timezone", "UTC"])
    now = {"timezone": "UTC"}
    with HttpServer(OWN) as upstream:
        config = folder / "gateway.toml"
        config.write_text(
            TOOLS + '[agents.calm]\ntoken = "tok-calm"\ntools = ["own__*", "time__*"]\n'
            f'[upstreams.own]\nurl = "{upstream.url}"\n'
            f'[upstreams.time]\ncommand = "{TIME}"\nargs = ["--local-timezone", "UTC"]\n'
        )
        with HttpServer(f"--config={config}") as gateway:
            assert upstream.proc is not None and gateway.proc is not None
            pids = {"direct": [upstream.proc.pid], "gateway": [upstream.proc.pid, gateway.proc.pid]}
            for _ in range(rounds):
                for label, where, tool in (("direct", upstream.url, "pid"), ("gateway", gateway.url, "own__pid")):
                    before = sum(tree_cpu_s(pid) for pid in pids[label])
                    median = asyncio.run(_sequential(where, tool, {}, calls))
                    cpu = (sum(tree_cpu_s(pid) for pid in pids[label]) - before) / (calls + 50) * 1e6
                    best["own_http"][f"{label}_ms"] = min(best["own_http"][f"{label}_ms"], median * 1000)
                    best["own_http"][f"{label}_cpu_us"] = min(best["own_http"][f"{label}_cpu_us"], cpu)
                direct = asyncio.run(_sequential(time_direct, "get_current_time", now, calls))
                through = asyncio.run(_sequential(gateway.url, "time__get_current_time", now, calls))
                best["time"]["direct_ms"] = min(best["time"]["direct_ms"], direct * 1000)
                best["time"]["gateway_ms"] = min(best["time"]["gateway_ms"], through * 1000)
    for figures in best.values():
        figures["latency_ratio"] = figures["gateway_ms"] / figures["direct_ms"]
        if "direct_cpu_us" in figures:
            figures["cpu_ratio"] = figures["gateway_cpu_us"] / figures["direct_cpu_us"]
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=5.0, help="each fairness case")
    parser.add_argument("--rounds", type=int, default=3, help="of the fairness cases, interleaved")
    parser.add_argument("--parts", default="cpu,http,fairness,postgres,gateway", help="which parts, comma-separated")
    parser.add_argument("--hog", nargs=2, metavar=("URL", "TOKEN"), help=argparse.SUPPRESS)
    parser.add_argument("--respect", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--raw", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.hog:  # the hog's own process (see fairness)
        url, token = args.hog
        print(json.dumps(asyncio.run(_hammer(url, token, args.seconds, None if args.raw else args.respect))))
        return
    folder = Path(tempfile.mkdtemp(prefix="toolwire-limits-bench-"))
    results: dict[str, Any] = {}
    parts = set(args.parts.split(","))
    if "cpu" in parts:
        cpu = asyncio.run(in_process_cpu(folder, args.calls * 5))
        results["in_process_cpu_us"] = {**cpu, "ratio": cpu["on"] / cpu["off"]}
    if "http" in parts:
        http = http_cpu(folder, args.calls)
        results["http_server_cpu_us"] = {**http, "ratio": http["on"] / http["off"]}
    if "fairness" in parts:
        results["fairness"] = fairness(folder, args.seconds, args.rounds)
    if "gateway" in parts:
        results["gateway"] = gateway_overhead(folder, args.calls // 2, args.rounds)
    if "postgres" in parts:
        pg_root = Path(tempfile.mkdtemp(prefix="toolwire-pg-limits-"))
        try:
            url = fresh_database(start_postgres(pg_root), "limits_bench")
            results["check_latency"] = asyncio.run(check_latency(url, args.calls * 2))
        finally:
            stop_postgres(pg_root)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
