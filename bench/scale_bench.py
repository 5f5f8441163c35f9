"""1,000 concurrent scripted runs against ONE Streamable HTTP tool server (uvicorn subprocess on 127.0.0.1).

Each run is a real Agent with its own MCP session: a scripted model that makes STEPS-1 echo calls and then answers.
Reported: runs completed, median and p99 step latency (model call + tool call + bookkeeping, from StepRecord),
throughput, and peak memory of the client process and of the server process.

Reference: the same scripted run alone against the same idle server, measured in the same process just before the
load. The ratio `loaded / alone` is what 1,000-way concurrency costs each step, which is what a user of one run
feels (on 2 cores, mostly queueing behind the other 999); throughput against the lone run back to back says how much
the concurrency buys. Comparing with a plain MCPServer instead would measure the server, which
bench/server_bench.py already does.
Memory is compared with the same processes before the load (client after imports, server after start-up).

`python -m bench.scale_bench [RUNS]` prints the figures as JSON; `run()` returns them for bench/run.py.
"""

import json
import resource
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
from tests.helpers.polling import await_until  # the repo's folders import as namespace packages

from toolwire_client.config import RunLimits
from toolwire_client.loop import Agent
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.state import RunState
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import AssistantMessage, Message, ToolCall
from toolwire_shared.usage import Usage

REPO = Path(__file__).resolve().parents[1]
ECHO = REPO / "bench" / "echo_servers.py"
STEPS = 3
"""Two tool steps and a final answer per run."""


def _script(messages: list[Message]) -> AssistantMessage:
    done = sum(1 for m in messages if isinstance(m, AssistantMessage))
    if done + 1 >= STEPS:
        return AssistantMessage(text="done")
    return AssistantMessage(tool_calls=[ToolCall(id=f"c{done}", name="echo", arguments={"text": f"step {done}"})])


def _usage(call: int, messages: list[Message]) -> Usage:
    return Usage(input_tokens=100 * call, output_tokens=20)


async def one_run(url: str) -> RunState:
    model = ScriptedModel(_script, name="scale", usage_fn=_usage)
    agent = Agent(model, ToolBox([McpSource("echo", url=url)]), name="scale", limits=RunLimits(max_steps=STEPS + 1))
    return await agent.run("echo twice, then answer")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _rss_kib(pid: int | str, field: str) -> int:
    """VmRSS (now) or VmHWM (peak) of a process, in KiB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


async def _wait_ready(url: str, proc: subprocess.Popen[bytes]) -> None:
    """Poll the server's health endpoint (the tests' bounded wait: it fails if the server exits first)."""
    health = url.rsplit("/mcp", 1)[0] + "/healthz"
    async with httpx2.AsyncClient(timeout=2) as http:

        async def answers() -> bool:
            try:
                return (await http.get(health)).status_code < 500
            except httpx2.TransportError:
                return False

        await await_until(answers, f"the tool server at {url} to answer", timeout_s=30, interval_s=0.05, proc=proc)


def _step_latencies(states: list[RunState]) -> list[float]:
    return [
        (step.finished_at - step.started_at).total_seconds()
        for state in states
        for step in state.steps
        if step.finished_at is not None
    ]


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _measure(runs: int, proc: subprocess.Popen[bytes], url: str) -> dict[str, Any]:
    await _wait_ready(url, proc)
    await one_run(url)  # warm-up: imports, first session
    alone_started = time.perf_counter()
    alone = [await one_run(url) for _ in range(20)]
    alone_wall = time.perf_counter() - alone_started
    alone_steps = _step_latencies(alone)
    server_before = _rss_kib(proc.pid, "VmRSS")
    client_before = _rss_kib("self", "VmRSS")

    states: list[RunState | None] = [None] * runs
    failures: list[str] = []

    async def worker(i: int) -> None:
        try:
            states[i] = await one_run(url)
        except Exception as exc:  # counted, not fatal: the figure is how many complete
            failures.append(f"{type(exc).__name__}: {exc}")

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for i in range(runs):
            group.start_soon(worker, i)
    wall = time.perf_counter() - started

    done = [s for s in states if s is not None and s.status == "done"]
    loaded_steps = _step_latencies([s for s in states if s is not None])
    median_alone, median_loaded = statistics.median(alone_steps), statistics.median(loaded_steps)
    p99_alone, p99_loaded = _p(alone_steps, 0.99), _p(loaded_steps, 0.99)
    server_peak = _rss_kib(proc.pid, "VmHWM")
    client_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "runs": runs,
        "completed": len(done),
        "failures": sorted(set(failures))[:5],
        "steps_per_run": STEPS,
        "wall_s": wall,
        "steps_per_s": len(loaded_steps) / wall,
        "step_median_ms": median_loaded * 1000,
        "step_p99_ms": p99_loaded * 1000,
        "alone_step_median_ms": median_alone * 1000,
        "alone_step_p99_ms": p99_alone * 1000,
        "client_rss_before_mib": client_before / 1024,
        "client_rss_peak_mib": client_peak / 1024,
        "server_rss_before_mib": server_before / 1024,
        "server_rss_peak_mib": server_peak / 1024,
        "figures": [
            _figure("runs completed", len(done), "runs", "runs started", runs),
            _figure("step latency, median", median_loaded * 1000, "ms", "one run alone, median", median_alone * 1000),
            _figure("step latency, p99", p99_loaded * 1000, "ms", "one run alone, p99", p99_alone * 1000),
            # both include each run's MCP session set-up (initialize, tools/list), so the work per run is the same
            _figure(
                "throughput under load",
                len(loaded_steps) / wall,
                "steps/s",
                "one run at a time, back to back",
                len(alone_steps) / alone_wall,
            ),
            _figure("client peak RSS", client_peak / 1024, "MiB", "client before the load", client_before / 1024),
            _figure("server peak RSS", server_peak / 1024, "MiB", "server before the load", server_before / 1024),
        ],
    }


def _figure(name: str, value: float, unit: str, reference: str, reference_value: float) -> dict[str, Any]:
    return {"name": name, "value": value, "unit": unit, "reference": reference, "reference_value": reference_value}


def run(runs: int = 1000) -> dict[str, Any]:
    # 1,000 sessions need more than the default 1,024 file descriptors in one process
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < min(hard, 8192):
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    port = _free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    argv = [sys.executable, "-m", "toolwire_server", f"{ECHO}:registry", "--http", "--port", str(port)]
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        return anyio.run(_measure, runs, proc, url)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    print(json.dumps(run(int(sys.argv[1]) if len(sys.argv) > 1 else 1000), indent=2))
