"""10,000 concurrent scripted runs in one process against ONE Streamable HTTP tool server (uvicorn subprocess on
127.0.0.1), all through one shared MCP connection (`SharedConnections`: one httpx pool, one SDK session).

Each run is a real Agent whose tools come from `build_sources`, as a user's do: a scripted model that makes STEPS-1
echo calls and then answers. Reported: runs completed, median and p99 step latency (model call + tool call +
bookkeeping, from StepRecord), throughput, client memory per run and server peak memory.

Client memory per run = (client peak RSS during the load - client RSS just before it) / runs: what each run in
flight costs the process, next to the 50 KiB target (issue 13). A finished run's state is dropped once its figures
are taken (a worker does not keep it either), so the figure is the runs', not the bench's list of results.

Throughput reference: the same runs one at a time, back to back, on the same shared connection just before the load
(target: loaded / back to back >= 0.9, so 10,000-way concurrency costs no throughput). Latency reference: the same
run alone. The old mode, each run with its own MCP session (httpx pool, SDK session, streams and tasks), is kept as
a reference row at 1,000 runs: it shows the before.

`python -m bench.scale_bench [RUNS]` prints the figures as JSON; `run()` returns them for bench/run.py, and
`measure()` is the one measuring function (tests/test_bench_scale.py runs it small). Each mode is measured in a
fresh process (`--mode shared|old`) that sets its garbage collector as `toolwire worker` does
(client/toolwire_client/many_runs.py: with CPython's defaults the throughput ratio at 10,000 runs was 0.76).
"""

import argparse
import gc
import json
import resource
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
from tests.helpers.polling import await_until  # the repo's folders import as namespace packages
from tests.helpers.servers import free_port, stop_process

from toolwire_client import (
    Agent,
    RunLimits,
    ScriptedModel,
    ServerSpec,
    SharedConnections,
    ToolBox,
    build_sources,
    tune_gc_for_many_runs,
)
from toolwire_shared.messages import AssistantMessage, Message, ToolCall
from toolwire_shared.usage import Usage

REPO = Path(__file__).resolve().parents[1]
ECHO = REPO / "bench" / "echo_servers.py"
STEPS = 3
"""Two tool steps and a final answer per run."""
LIMITS = RunLimits(max_steps=STEPS + 1, tool_timeout_s=600)
"""A call's timeout covers its wait in the queue: 10,000 runs on 2 cores wait about runs / throughput (a minute)."""
RUNS = 10_000
OLD_MODE_RUNS = 1_000
TARGET_KIB_PER_RUN = 50
TARGET_THROUGHPUT_RATIO = 0.9
BACK_TO_BACK = 50
"""Runs in the back-to-back reference."""


def _script(messages: list[Message]) -> AssistantMessage:
    done = sum(1 for m in messages if isinstance(m, AssistantMessage))
    if done + 1 >= STEPS:
        return AssistantMessage(text="done")
    return AssistantMessage(tool_calls=[ToolCall(id=f"c{done}", name="echo", arguments={"text": f"step {done}"})])


def _usage(call: int, messages: list[Message]) -> Usage:
    return Usage(input_tokens=100 * call, output_tokens=20)


@dataclass
class Outcome:
    """What the bench keeps of a finished run: its status and its steps' latencies (the state itself is dropped)."""

    done: bool
    steps: list[float] = field(default_factory=list)
    failed_calls: dict[str, int] = field(default_factory=dict)
    """Tool calls that came back as errors, by kind (a timed-out call is one: the run still ends)."""


async def one_run(url: str) -> Outcome:
    """One scripted run whose echo server comes from build_sources: a lease on the shared connection inside
    SharedConnections, its own MCP session outside."""
    model = ScriptedModel(_script, name="scale", usage_fn=_usage)
    toolbox = ToolBox(build_sources([ServerSpec(name="echo", url=url)]))
    state = await Agent.of(model, toolbox, name="scale", limits=LIMITS).run("echo twice")
    steps = [(s.finished_at - s.started_at).total_seconds() for s in state.steps if s.finished_at is not None]
    failed = Counter(r.error_kind or "error" for s in state.steps for r in s.results if r.is_error)
    return Outcome(state.status == "done", steps, dict(failed))


def _rss_kib(pid: int | str, field: str) -> int:
    """VmRSS (now) or VmHWM (peak) of a process, in KiB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _reset_peak(pid: int | str) -> bool:
    """Start VmHWM afresh at the current RSS (Linux: `5` to clear_refs), so one phase's peak is not an earlier
    phase's; False where the kernel refuses (then the peak may be an earlier one, and the figure says so)."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


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


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def _load(runs: int, url: str) -> tuple[list[Outcome], list[str], float]:
    """`runs` runs started at once; their outcomes, failures (counted, not fatal) and the wall time."""
    outcomes: list[Outcome] = []
    failures: list[str] = []

    async def one() -> None:
        try:
            outcomes.append(await one_run(url))
        except Exception as exc:  # the figure is how many complete
            failures.append(f"{type(exc).__name__}: {exc}")

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(runs):
            group.start_soon(one)
    return outcomes, failures, time.perf_counter() - started


async def measure(runs: int, url: str, proc: subprocess.Popen[bytes], *, shared: bool = True) -> dict[str, Any]:
    """The figures of `runs` concurrent runs against the server at `url` (its process `proc`), through one shared
    connection (`shared`) or each on its own session."""
    await _wait_ready(url, proc)
    async with SharedConnections() if shared else nullcontext():
        await one_run(url)  # warm-up: imports, the first connection
        alone_started, alone_cpu = time.perf_counter(), time.process_time()
        alone = [await one_run(url) for _ in range(BACK_TO_BACK)]
        alone_wall, alone_cpu = time.perf_counter() - alone_started, time.process_time() - alone_cpu
        alone_steps = [s for o in alone for s in o.steps]
        gc.collect()
        server_before, client_before = _rss_kib(proc.pid, "VmRSS"), _rss_kib("self", "VmRSS")
        peaks_reset = _reset_peak("self") and _reset_peak(proc.pid)
        load_cpu = time.process_time()
        outcomes, failures, wall = await _load(runs, url)
        load_cpu = time.process_time() - load_cpu
        client_peak, server_peak = _rss_kib("self", "VmHWM"), _rss_kib(proc.pid, "VmHWM")
    loaded_steps = [s for o in outcomes for s in o.steps]
    completed = sum(o.done for o in outcomes)
    per_run_kib = (client_peak - client_before) / runs
    median_alone, median_loaded = (
        statistics.median(alone_steps),
        statistics.median(loaded_steps) if loaded_steps else float("nan"),
    )
    p99_alone, p99_loaded = _p(alone_steps, 0.99), _p(loaded_steps, 0.99)
    steps_per_s, alone_steps_per_s = len(loaded_steps) / wall, len(alone_steps) / alone_wall
    failed_calls: Counter[str] = Counter()
    for o in outcomes:
        failed_calls.update(o.failed_calls)
    mode = "shared connection" if shared else "a session per run"
    return {
        "runs": runs,
        "mode": mode,
        "completed": completed,
        "failures": sorted(set(failures))[:5],
        "steps_per_run": STEPS,
        "wall_s": wall,
        "failed_calls": dict(failed_calls),
        "steps_per_s": steps_per_s,
        "client_cpu_ms_per_step": load_cpu / max(1, len(loaded_steps)) * 1000,
        "back_to_back_client_cpu_ms_per_step": alone_cpu / max(1, len(alone_steps)) * 1000,
        "back_to_back_steps_per_s": alone_steps_per_s,
        "throughput_ratio": steps_per_s / alone_steps_per_s,
        "step_median_ms": median_loaded * 1000,
        "step_p99_ms": p99_loaded * 1000,
        "alone_step_median_ms": median_alone * 1000,
        "alone_step_p99_ms": p99_alone * 1000,
        "client_rss_before_mib": client_before / 1024,
        "client_rss_peak_mib": client_peak / 1024,
        "client_kib_per_run": per_run_kib,
        "server_rss_before_mib": server_before / 1024,
        "server_rss_peak_mib": server_peak / 1024,
        "peaks_reset": peaks_reset,
    }


def _figures(shared: dict[str, Any], old: dict[str, Any] | None) -> list[dict[str, Any]]:
    runs = f"{shared['runs']:,} runs"
    out = [
        _figure(f"{runs}: runs completed", shared["completed"], "runs", "runs started", shared["runs"]),
        _figure(
            f"{runs}: client memory per run",
            shared["client_kib_per_run"],
            "KiB",
            "target (issue 13)",
            TARGET_KIB_PER_RUN,
        ),
        _figure(
            f"{runs}: throughput under load",
            shared["steps_per_s"],
            "steps/s",
            f"the same runs back to back (target ratio >= {TARGET_THROUGHPUT_RATIO})",
            shared["back_to_back_steps_per_s"],
        ),
        _figure(
            f"{runs}: step latency, median",
            shared["step_median_ms"],
            "ms",
            "one run alone, median",
            shared["alone_step_median_ms"],
        ),
        _figure(
            f"{runs}: step latency, p99", shared["step_p99_ms"], "ms", "one run alone, p99", shared["alone_step_p99_ms"]
        ),
        _figure(
            f"{runs}: server peak RSS",
            shared["server_rss_peak_mib"],
            "MiB",
            "server before the load",
            shared["server_rss_before_mib"],
        ),
    ]
    if old is not None:
        out.append(
            _figure(
                f"client memory per run, {runs} on one shared connection",
                shared["client_kib_per_run"],
                "KiB",
                f"before: a session per run ({old['runs']:,} runs)",
                old["client_kib_per_run"],
            )
        )
    return out


def _figure(name: str, value: float, unit: str, reference: str, reference_value: float) -> dict[str, Any]:
    return {"name": name, "value": value, "unit": unit, "reference": reference, "reference_value": reference_value}


@contextmanager
def echo_server() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The echo tool server on a free port of 127.0.0.1: its URL and process, stopped at the end."""
    port = free_port()
    argv = [sys.executable, "-m", "toolwire_server", f"{ECHO}:registry", "--http", "--port", str(port)]
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield f"http://127.0.0.1:{port}/mcp", proc
    finally:
        stop_process(proc)


def _more_files() -> None:
    """Sessions per run (the old mode) need more than the default 1,024 file descriptors in one process."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < min(hard, 8192):
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))


def run(runs: int = RUNS, old_mode_runs: int = OLD_MODE_RUNS) -> dict[str, Any]:
    """The shared-connection figures at `runs`, then (0 to skip) the old session-per-run mode at `old_mode_runs`,
    each in a fresh process against a fresh server: peak RSS is a process's high-water mark, so a mode measured
    after another would be measured on the heap the first left free (the old mode read 0.05 KiB per run so)."""
    shared = measured_apart(runs, shared=True)
    old = measured_apart(old_mode_runs, shared=False) if old_mode_runs else None
    return {**shared, "old_mode": old, "figures": _figures(shared, old)}


def measured_apart(runs: int, *, shared: bool) -> dict[str, Any]:
    argv = [sys.executable, "-m", "bench.scale_bench", str(runs), "--mode", "shared" if shared else "old"]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[1:])} exited {done.returncode}: {done.stderr[-2000:]}")
    figures: dict[str, Any] = json.loads(done.stdout)
    return figures


def measured_here(runs: int, *, shared: bool) -> dict[str, Any]:
    _more_files()
    tune_gc_for_many_runs()  # as `toolwire worker` does: see client/toolwire_client/many_runs.py
    with echo_server() as (url, proc):
        return anyio.run(lambda: measure(runs, url, proc, shared=shared))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="?", type=int, default=RUNS, help=f"concurrent runs (default {RUNS})")
    parser.add_argument("--mode", choices=["shared", "old"], help="only this mode, in this process")
    options = parser.parse_args()
    if options.mode:
        print(json.dumps(measured_here(options.runs, shared=options.mode == "shared")))
    else:
        print(json.dumps(run(options.runs), indent=2))
