"""Tool-server benchmark: toolwire vs a plain `mcp` MCPServer vs a hand-written NDJSON pipe (the floor).

Per configuration: sequential latency (median, p99) and calls/s, then throughput with 16 and 64 calls in flight on
one connection, plus the server process's CPU per call during the sequential phase. Client: `mcp.Client` (auto mode:
2026-07-28) for toolwire and MCPServer; a hand-written asyncio client for the pipe, and for toolwire's server once
more (`toolwire-raw-client`: the server alone next to the floor); and toolwire's own client, McpSource
(`toolwire-mcpsource`: what a run pays per stdio call).

    .venv/bin/python -m bench.server_bench [--calls N]      (or: make bench)
"""

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
from bench.proc_cpu import cpu_s
from mcp import Client, StdioServerParameters

REPO = Path(__file__).resolve().parents[1]
ECHO = "bench/echo_servers.py"
CallFn = Callable[[str], Awaitable[str]]


def _children() -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        text = (task / "children").read_text().split()
        found.update(int(pid) for pid in text)
    return found


async def _measure(call: CallFn, server_pid: int | None, calls: int) -> dict[str, float]:
    for i in range(min(100, calls)):  # warm-up
        await call(f"w{i}")
    latencies = []
    cpu0 = cpu_s(server_pid) if server_pid else 0.0
    start = time.perf_counter()
    for i in range(calls):
        t0 = time.perf_counter()
        assert await call(f"s{i}") == f"s{i}"
        latencies.append(time.perf_counter() - t0)
    seq_wall = time.perf_counter() - start
    cpu1 = cpu_s(server_pid) if server_pid else 0.0
    latencies.sort()
    out = {
        "seq_median_us": statistics.median(latencies) * 1e6,
        "seq_p99_us": latencies[int(len(latencies) * 0.99) - 1] * 1e6,
        "seq_calls_s": calls / seq_wall,
        "server_cpu_us_per_call": (cpu1 - cpu0) / calls * 1e6 if server_pid else float("nan"),
    }
    for in_flight in (16, 64):
        counter = iter(range(calls * 2))

        start = time.perf_counter()
        await asyncio.gather(*(_worker(call, counter) for _ in range(in_flight)))
        out[f"c{in_flight}_calls_s"] = calls * 2 / (time.perf_counter() - start)
    return out


async def _worker(call: CallFn, counter: Iterator[int]) -> None:
    """Pull the next call number from the shared counter until it runs out: N workers = N calls in flight."""
    for i in counter:
        assert await call(f"c{i}") == f"c{i}"


def _spawn(argv: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _text(result: Any) -> str:
    return str(result.content[0].text)


async def _bench_mcp_stdio(argv: list[str], calls: int) -> dict[str, float]:
    before = _children()
    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(REPO))
    async with Client(params) as client:
        pid = next(iter(_children() - before), None)

        async def call(text: str) -> str:
            return _text(await client.call_tool("echo", {"text": text}))

        return await _measure(call, pid, calls)


async def _bench_mcpsource(argv: list[str], calls: int) -> dict[str, float]:
    from toolwire_client import McpSource
    from toolwire_client.tools.source import RunContext, ToolRequest
    from toolwire_shared.messages import ToolCall

    before = _children()
    source = McpSource("bench-echo", command=argv, cwd=str(REPO))
    await source.start()
    try:
        pid = next(iter(_children() - before), None)
        run = RunContext("bench")

        async def call(text: str) -> str:
            request = ToolRequest(ToolCall(id="c", name="echo", arguments={"text": text}), run, timeout_s=60)
            return (await source.call(request)).content

        return await _measure(call, pid, calls)
    finally:
        await source.aclose()


async def _bench_mcp_http(argv: list[str], port: int, calls: int) -> dict[str, float]:
    proc = _spawn(argv)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            await asyncio.sleep(0.05)
        async with httpx2.AsyncClient(timeout=60) as http:
            from mcp.client.streamable_http import streamable_http_client

            async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client:

                async def call(text: str) -> str:
                    return _text(await client.call_tool("echo", {"text": text}))

                return await _measure(call, proc.pid, calls)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
"""The per-request envelope of a 2026-07-28 call, as mcp.Client sends it; the raw pipe ignores it."""


async def _bench_raw(argv: list[str], calls: int) -> dict[str, float]:
    """The hand-written client: against the raw pipe it is the floor; against toolwire's server it measures the
    server alone, with no SDK client in the figure."""
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, limit=1 << 24
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout
    pending: dict[int, asyncio.Future[str]] = {}
    ids = iter(range(1 << 62))

    async def read_loop() -> None:
        while line := await stdout.readline():
            message = json.loads(line)
            pending.pop(message["id"]).set_result(message["result"]["content"][0]["text"])

    reader = asyncio.create_task(read_loop())

    async def call(text: str) -> str:
        request_id = next(ids)
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        pending[request_id] = future
        request = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}, "_meta": MODERN_META},
        }
        stdin.write(json.dumps(request).encode() + b"\n")
        await stdin.drain()
        return await future

    try:
        return await _measure(call, proc.pid, calls)
    finally:
        stdin.close()
        await proc.wait()
        reader.cancel()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _run(calls: int, rounds: int, only: str = "") -> dict[str, Any]:
    toolwire = [sys.executable, "-m", "toolwire_server", f"{ECHO}:registry"]
    mcpserver = [sys.executable, ECHO]
    configs: dict[str, Callable[[], Awaitable[dict[str, float]]]] = {
        "stdio/raw-pipe": lambda: _bench_raw([sys.executable, ECHO, "raw-stdio"], calls),
        "stdio/toolwire-raw-client": lambda: _bench_raw([*toolwire, "--stdio", "--log-level", "ERROR"], calls),
        "stdio/mcpserver": lambda: _bench_mcp_stdio([*mcpserver, "mcpserver-stdio"], calls),
        "stdio/toolwire": lambda: _bench_mcp_stdio([*toolwire, "--stdio"], calls),
        "stdio/toolwire-mcpsource": lambda: _bench_mcpsource([*toolwire, "--stdio", "--log-level", "ERROR"], calls),
        "http/mcpserver": lambda: _http(mcpserver, ["mcpserver-http", "{port}"], calls),
        "http/toolwire": lambda: _http(toolwire, ["--http", "--port", "{port}"], calls),
    }
    configs = {name: bench for name, bench in configs.items() if name.startswith(only)}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in configs}
    for _ in range(rounds):  # interleaved rounds, so a burst of load on the shared machine hits every config
        for name, bench in configs.items():
            runs[name].append(await bench())
    results = {
        name: {key: statistics.median(run[key] for run in per_round) for key in per_round[0]}
        for name, per_round in runs.items()
    }
    ratios = {
        transport: {
            key: results[f"{transport}/toolwire"][key] / results[f"{transport}/mcpserver"][key]
            for key in ("seq_median_us", "seq_calls_s", "c16_calls_s", "c64_calls_s", "server_cpu_us_per_call")
        }
        for transport in ("stdio", "http")
        if f"{transport}/toolwire" in results and f"{transport}/mcpserver" in results
    }
    return {"calls": calls, "rounds": rounds, "results": results, "toolwire_vs_mcpserver": ratios}


async def _http(base: list[str], args: list[str], calls: int) -> dict[str, float]:
    port = _free_port()
    return await _bench_mcp_http([*base, *(a.format(port=port) for a in args)], port, calls)


def run(calls: int = 300, rounds: int = 3, only: str = "") -> dict[str, Any]:
    """Per configuration and round: `calls` sequential calls (after up to 100 warm-up), then 2x`calls` at 16 and at
    64 in flight. Reported values are the median over the interleaved rounds. `only`: the configurations whose name
    starts with it (`stdio`, `http`, `stdio/toolwire`)."""
    return asyncio.run(_run(calls, rounds, only))


def _table(report: dict[str, Any]) -> str:
    cols = ["seq_median_us", "seq_p99_us", "seq_calls_s", "c16_calls_s", "c64_calls_s", "server_cpu_us_per_call"]
    lines = ["| config | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for name, row in report["results"].items():
        lines.append(f"| {name} | " + " | ".join(f"{row[c]:.0f}" for c in cols) + " |")
    lines += ["", "| toolwire / mcpserver | " + " | ".join(c for c in cols if c != "seq_p99_us") + " |"]
    lines.append("|---" * 6 + "|")
    for transport, ratio in report["toolwire_vs_mcpserver"].items():
        lines.append(f"| {transport} | " + " | ".join(f"{v:.2f}" for v in ratio.values()) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="only the configurations whose name starts with this (e.g. stdio)")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    report = run(options.calls, options.rounds, options.only)
    print(json.dumps(report, indent=2) if options.json else _table(report))
