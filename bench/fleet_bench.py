"""The worker fleet on a PostgreSQL this script starts, driven only through what a user has: `toolwire worker`
processes, the fleet's submit functions (what `toolwire submit` calls), the run store's tables and DBOS's.

Every run is the same three-step agent: a loopback model (bench/loopback_model.py, OpenAI Chat Completions over
HTTP, each answer after 200 ms) calls get_order, then calculator, on ONE real support tool server
(`toolwire serve --http`, 127.0.0.1), then answers. Three batches of N runs (default 2,000), each on a fresh
database: 1 worker, 3 workers, and 3 workers with one killed -9 once half the runs have ended. Per batch: runs/s,
run latency (submit to end, and dequeue to end, from the run store's and DBOS's timestamps), rows written per loop
step (pg_stat_user_tables, per table), runs lost (submitted and not ended `done`), the takeover time after the
kill, and CPU per loop step of the workers, the tool server, PostgreSQL and the model (/proc, bench/proc_cpu.py).

Why an HTTP tool server rather than one stdio server per run: starting `python -m toolwire_server` costs ~0.9 s of
CPU on this machine, so 2,000 stdio runs would spend ~30 CPU-minutes starting servers and measure nothing else.

`python -m bench.fleet_bench [N]` prints the figures as JSON; `run()` returns them for bench/run.py.
"""

import argparse
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fleet"))

import fleet_procs
from bench.fleet_figures import figures
from bench.loopback_model import CALLS_PER_RUN
from bench.proc_cpu import cpu_s, machine_busy_s, tree_cpu_s

from helpers.cli import TOOLWIRE
from helpers.polling import WaitFailed, await_until, wait_until
from helpers.postgres import fresh_database, start_postgres, stop_postgres
from toolwire_client import FleetClient, RunConfig, RunLimits, ServerSpec, open_store, submit

REPO = Path(__file__).resolve().parents[1]
RUNS = 2000
CONCURRENCY = 50
"""Runs one worker drives at once: 50 runs of 3 x 200 ms model calls could finish 83 runs/s per worker, far above
what 2 cores drive, so the model's latency is never the limit."""
MODEL_DELAY_S = 0.2
TASK = "What does order A123 cost with GST?"
DEAD_S, BEAT_S, POLL_S = 5.0, 1.0, 0.5
"""The fleet's default heartbeat settings and queue polling (docs/fleet.md): a takeover's bound is their sum."""
END_TIMEOUT_S = 300.0
"""Plus 0.3 s per run: then the runs not ended are counted lost (a run stuck PENDING would otherwise hang the bench)."""
ONCE = (
    "dbos.dbos_migrations",
    "dbos.application_versions",
    "public.schema_version",
    "public.fleet_schema_version",
)
"""Tables written when a database is first used (migrations), not by runs: left out of the per-step total (their
rows can also reach the statistics late, from backends that had not flushed when the batch began)."""


@dataclass
class Rig:
    """What every batch shares: PostgreSQL, the loopback model, the tool server."""

    pg_root: Path
    pg_url: str
    postmaster: int
    model: subprocess.Popen[bytes]
    model_url: str
    tools: subprocess.Popen[bytes]
    tools_url: str


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_rig(tmp: Path) -> Rig:
    pg_root = Path(tempfile.mkdtemp(prefix="toolwire-pg-bench-"))  # its own: start_postgres hands it to `postgres`
    pg_url = start_postgres(pg_root, max_connections=400)  # room for 3 workers even at a connection per run
    postmaster = int((pg_root / "data" / "postmaster.pid").read_text().split()[0])
    model = subprocess.Popen(
        [sys.executable, "-m", "bench.loopback_model", str(MODEL_DELAY_S)], cwd=REPO, stdout=subprocess.PIPE
    )
    assert model.stdout is not None
    model_url = f"http://127.0.0.1:{int(model.stdout.readline())}/v1"
    port = _free_port()
    log = (tmp / "tools.log").open("wb")
    env = {**os.environ, "TOOLWIRE_SUPPORT_DB": str(tmp / "support.sqlite3")}
    argv = [TOOLWIRE, "serve", "examples.support_tools:registry", "--http", "--port", str(port)]
    argv += ["--max-sessions", "5000", "--max-sessions-per-agent", "5000"]  # one session per run in flight
    tools = subprocess.Popen(argv, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)

    def answers() -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            return False

    wait_until(answers, "the tool server to listen", timeout_s=60, interval_s=0.05, proc=tools, log=tmp / "tools.log")
    return Rig(pg_root, pg_url, postmaster, model, model_url, tools, f"http://127.0.0.1:{port}/mcp")


def stop_rig(rig: Rig) -> None:
    for proc in (rig.tools, rig.model):
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
    stop_postgres(rig.pg_root)
    shutil.rmtree(rig.pg_root, ignore_errors=True)


def table_writes(db: str) -> dict[str, int]:
    with psycopg.connect(db, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_force_next_flush()")
        rows = conn.execute(
            "SELECT schemaname || '.' || relname, n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_user_tables"
        ).fetchall()
    return {r[0]: int(r[1]) for r in rows}


def other_backends(db: str) -> int:
    """Client connections to `db` besides this one: a backend flushes its table statistics as it exits."""
    with psycopg.connect(db, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND backend_type = 'client backend'"
        ).fetchone()
    return int(row[0]) if row else 0


def progress(conn: psycopg.Connection[Any]) -> tuple[int, int]:
    """(runs ended, client connections to this database now)."""
    row = conn.execute(
        "SELECT (SELECT count(*) FROM runs WHERE status IN ('done', 'stopped', 'failed')),"
        " (SELECT count(*) FROM pg_stat_activity"
        "  WHERE datname = current_database() AND backend_type = 'client backend')"
    ).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def http_client_cpu_ms(samples: int = 20) -> dict[str, float]:
    """CPU of making one httpx2.AsyncClient (the model adapter makes one per run): a plain one loads the CA bundle
    into a new SSL context, even for http:// on 127.0.0.1; toolwire's take the process's one (toolwire_shared.tls)."""
    import httpx2

    from toolwire_shared.tls import ssl_context

    def each(make: Any) -> float:
        began = time.process_time()
        for _ in range(samples):
            make()
        return _ms((time.process_time() - began) / samples)

    return {
        "plain": each(httpx2.AsyncClient),
        "toolwire": each(lambda: httpx2.AsyncClient(verify=ssl_context())),
    }


def run_rows(db: str) -> list[tuple[str, int, float, float, float | None]]:
    """(status, steps, submitted, ended, dequeued) of every run, epoch seconds: the run's first save is its
    submission, its last save its end; DBOS's started_at is when a worker took the (latest) workflow."""
    with psycopg.connect(db, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT r.status, r.steps, EXTRACT(EPOCH FROM r.started_at)::float8,"
            " EXTRACT(EPOCH FROM r.updated_at)::float8, w.started_at_epoch_ms"
            " FROM runs r LEFT JOIN dbos.workflow_status w ON w.workflow_uuid = r.run_id"
        ).fetchall()
    return [(r[0], int(r[1]), float(r[2]), float(r[3]), r[4] / 1000 if r[4] is not None else None) for r in rows]


def not_done_reasons(db: str) -> dict[str, int]:
    """How many runs ended other than `done`, by status, stop reason and the first line of their report."""
    with psycopg.connect(db, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT status, state->>'stop_reason', state->>'report' FROM runs WHERE status <> 'done'"
        ).fetchall()
    return dict(
        Counter(
            f"{status} ({stop}): {report.splitlines()[0][:300] if report else '-'}" for status, stop, report in rows
        )
    )


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


async def batch(rig: Rig, workers: int, n: int, kill_midway: bool = False) -> dict[str, Any]:
    """n runs on `workers` fresh workers on a fresh database; with `kill_midway`, the first worker is killed -9 once
    half the runs have ended."""
    db = fresh_database(rig.pg_url, f"bench_{uuid.uuid4().hex[:8]}")
    tmp = Path(tempfile.mkdtemp(prefix="fleet-bench-"))
    support = [ServerSpec(name="support", url=rig.tools_url)]  # the workers' own servers file
    model_at = {"OPENAI_BASE_URL": rig.model_url}  # and their own model settings: a submitted run names neither
    procs = [
        fleet_procs.start_worker(
            db, tmp / f"w{i}.log", concurrency=CONCURRENCY, fast_takeover=False, env_extra=model_at, servers=support
        )
        for i in range(workers)
    ]
    config = RunConfig(model="openai:loopback", servers=[ServerSpec(name="support")], limits=RunLimits(max_steps=8))
    result: dict[str, Any] = {"workers": workers, "concurrency_per_worker": CONCURRENCY, "runs": n}
    worker_cpu: dict[int, float] = {}
    try:
        for w in procs:
            wait_until(lambda w=w: fleet_procs.started(w), "a worker", timeout_s=60, interval_s=0.1)
        store = await open_store(db)
        fleet = FleetClient(db)
        poll = psycopg.connect(db, autocommit=True)
        try:
            writes_before = table_writes(db)
            cpu_before = {
                "workers": sum(cpu_s(w.proc.pid) for w in procs),
                "tool_server": tree_cpu_s(rig.tools.pid),
                "postgres": tree_cpu_s(rig.postmaster),
                "model": cpu_s(rig.model.pid),
            }
            machine_before, window_began = machine_busy_s(), time.monotonic()
            submitted = 0
            killed: dict[str, Any] = {}

            async def submit_all() -> None:
                nonlocal submitted
                own = resource.getrusage(resource.RUSAGE_SELF)
                began = time.monotonic()
                for _ in range(n):
                    await submit(store, fleet, TASK, config)
                    submitted += 1
                used = resource.getrusage(resource.RUSAGE_SELF)
                result["submit_s"] = round(time.monotonic() - began, 2)
                result["submit_cpu_ms_per_run"] = _ms((used.ru_utime + used.ru_stime - own.ru_utime - own.ru_stime) / n)

            async def all_ended() -> bool:
                ended, connections = await anyio.to_thread.run_sync(progress, poll)
                result["peak_connections"] = max(result.get("peak_connections", 0), connections)
                victim = procs[0]
                midway = kill_midway and not killed and ended >= n // 2
                in_flight = fleet_procs.pending_of(db, victim.proc.pid) if midway else []
                if in_flight:  # midway, and the victim drives runs
                    killed["pid"] = victim.proc.pid
                    killed["in_flight"] = in_flight
                    worker_cpu[victim.proc.pid] = cpu_s(victim.proc.pid)
                    victim.kill9()
                    killed["at"] = time.time()
                    killed["ended_before"] = ended
                return submitted == n and ended >= n

            async with anyio.create_task_group() as group:
                group.start_soon(submit_all)
                try:
                    await await_until(all_ended, "every run to end", timeout_s=END_TIMEOUT_S + 0.3 * n, interval_s=0.25)
                except WaitFailed as exc:
                    result["gave_up"] = str(exc)  # the runs not ended are counted as lost below
            for w in procs:
                if w.proc.poll() is None:
                    worker_cpu[w.proc.pid] = cpu_s(w.proc.pid)
            cpu_after = {
                "workers": sum(worker_cpu.values()),
                "tool_server": tree_cpu_s(rig.tools.pid),
                "model": cpu_s(rig.model.pid),
            }
            machine_used, window = machine_busy_s() - machine_before, time.monotonic() - window_began
        finally:
            poll.close()
            fleet.close()
            await store.aclose()
    finally:
        for w in procs:
            w.stop()
    wait_until(lambda: other_backends(db) == 0, "the workers' connections to close", timeout_s=60, interval_s=0.1)
    cpu_after["postgres"] = tree_cpu_s(rig.postmaster)
    writes_after = table_writes(db)

    rows = run_rows(db)
    done = [r for r in rows if r[0] == "done"]
    steps = sum(r[1] for r in rows)
    tool_calls = sum(r[1] - 1 for r in done)  # the last step of a run is its answer
    began, finished = min(r[2] for r in rows), max(r[3] for r in rows)
    latency = [r[3] - r[2] for r in done]
    driven = [r[3] - r[4] for r in done if r[4] is not None]
    result |= {
        "done": len(done),
        "lost": n - len(done),
        "not_done": not_done_reasons(db),
        "steps": steps,
        "tool_calls": tool_calls,
        "wall_s": round(finished - began, 2),
        "runs_per_s": round(len(done) / (finished - began), 2),
        "steps_per_s": round(steps / (finished - began), 1),
        "latency_ms": {"p50": _ms(_p(latency, 0.5)), "p99": _ms(_p(latency, 0.99)), "max": _ms(max(latency))},
        "driven_latency_ms": {"p50": _ms(_p(driven, 0.5)), "p99": _ms(_p(driven, 0.99))},
        "model_floor_ms": _ms(MODEL_DELAY_S * CALLS_PER_RUN),
    }
    changed = {t: writes_after[t] - writes_before.get(t, 0) for t in writes_after}
    changed = {t: c for t, c in changed.items() if c}
    result["writes_per_step"] = {t: round(c / steps, 2) for t, c in sorted(changed.items()) if t not in ONCE}
    result["writes_per_step_total"] = round(sum(c for t, c in changed.items() if t not in ONCE) / steps, 2)
    result["writes_once"] = {t: c for t, c in sorted(changed.items()) if t in ONCE}
    used = {k: cpu_after[k] - cpu_before[k] for k in cpu_before}
    result["cpu_s"] = {k: round(v, 2) for k, v in used.items()}
    result["cpu_ms_per_step"] = {k: _ms(v / steps) for k, v in used.items()}
    result["tool_server_cpu_ms_per_call"] = _ms(used["tool_server"] / tool_calls) if tool_calls else None
    # throughput with the machine's share taken out: others' load decides how much of the 2 cores the fleet gets
    result["steps_per_cpu_s"] = round(steps / sum(used.values()), 1)
    result["cores_used"] = {
        "ours": round(sum(used.values()) / (finished - began), 2),
        "machine": round(machine_used / window, 2),
        "cores": os.cpu_count(),
    }
    if killed:
        taken = fleet_procs.restarted(db, killed["in_flight"], killed["pid"])
        result["killed"] = {
            "after_runs_ended": killed["ended_before"],
            "in_flight": len(killed["in_flight"]),
            "restarted_elsewhere": len(taken),
            "takeover_s": round(max(at for _, at in taken) - killed["at"], 2) if taken else None,
            "first_restart_s": round(min(at for _, at in taken) - killed["at"], 2) if taken else None,
        }
    shutil.rmtree(tmp, ignore_errors=True)
    return result


async def one_process(rig: Rig, n: int) -> dict[str, Any]:
    """The reference for a worker's CPU: the same n runs (same agent, model, tool server and PostgreSQL store, 50 at
    once, the tool server's connection shared and the store pooled as a worker has them) driven by the loop in this
    process, without the fleet: no DBOS, no queue, no legs. CPU is this process's (its threads included)."""
    from toolwire_client.assembly.agents import build_agent
    from toolwire_client.fleet.worker import DB_CONNECTIONS
    from toolwire_client.tools.shared_connections import SharedConnections

    db = fresh_database(rig.pg_url, f"bench_{uuid.uuid4().hex[:8]}")
    support = [ServerSpec(name="support", url=rig.tools_url)]
    config = RunConfig(model="openai:loopback", base_url=rig.model_url, servers=support, limits=RunLimits(max_steps=8))
    limiter = anyio.CapacityLimiter(CONCURRENCY)
    store = await open_store(db, connections=min(DB_CONNECTIONS, CONCURRENCY))
    try:
        writes_before = table_writes(db)
        own = resource.getrusage(resource.RUSAGE_SELF)
        pg_before, tools_before = tree_cpu_s(rig.postmaster), tree_cpu_s(rig.tools.pid)

        async def one() -> None:
            async with limiter:
                await build_agent(config, store=store).run(TASK)

        async with SharedConnections(process_wide=True), anyio.create_task_group() as group:
            for _ in range(n):
                group.start_soon(one)
        used = resource.getrusage(resource.RUSAGE_SELF)
    finally:
        await store.aclose()
    wait_until(lambda: other_backends(db) == 0, "the store's connections to close", timeout_s=60, interval_s=0.1)
    pg_used, tools_used = tree_cpu_s(rig.postmaster) - pg_before, tree_cpu_s(rig.tools.pid) - tools_before
    with psycopg.connect(db, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT status, steps, EXTRACT(EPOCH FROM started_at)::float8, EXTRACT(EPOCH FROM updated_at)::float8"
            " FROM runs"
        ).fetchall()
    steps = sum(int(r[1]) for r in rows)
    writes = table_writes(db)
    written = sum(c - writes_before.get(t, 0) for t, c in writes.items() if t not in ONCE)
    began, finished = min(r[2] for r in rows), max(r[3] for r in rows)
    return {
        "runs": n,
        "done": sum(1 for r in rows if r[0] == "done"),
        "steps": steps,
        "runs_per_s": round(n / (finished - began), 2),
        "writes_per_step_total": round(written / steps, 2),
        "writes_per_step": {
            t: round((c - writes_before.get(t, 0)) / steps, 2)
            for t, c in sorted(writes.items())
            if t not in ONCE and c - writes_before.get(t, 0)
        },
        "cpu_ms_per_step": {
            "process": _ms((used.ru_utime + used.ru_stime - own.ru_utime - own.ru_stime) / steps),
            "postgres": _ms(pg_used / steps),
            "tool_server": _ms(tools_used / steps),
        },
    }


def reference_pair(n: int) -> dict[str, Any]:
    """Only the one-process reference and the 1-worker batch (`--pair`): a quick A/B of the fleet's overhead."""
    tmp = Path(tempfile.mkdtemp(prefix="toolwire-fleet-bench-"))
    rig = start_rig(tmp)
    try:
        return {"one_process": anyio.run(one_process, rig, n), "1_worker": anyio.run(batch, rig, 1, n)}
    finally:
        stop_rig(rig)
        shutil.rmtree(tmp, ignore_errors=True)


def run(n: int = RUNS) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="toolwire-fleet-bench-"))
    rig = start_rig(tmp)
    try:
        alone = anyio.run(one_process, rig, n)
        one = anyio.run(batch, rig, 1, n)
        three = anyio.run(batch, rig, 3, n)
        killed = anyio.run(batch, rig, 3, n, True)
    finally:
        stop_rig(rig)
        shutil.rmtree(tmp, ignore_errors=True)
    notes = [
        f"{n} runs per batch, {CONCURRENCY} at once per worker; each run: {CALLS_PER_RUN} model calls "
        f"({MODEL_DELAY_S * 1000:.0f} ms each, loopback OpenAI Chat Completions) and {CALLS_PER_RUN - 1} tool calls "
        "on one shared `toolwire serve --http` support tool server; PostgreSQL with fsync=off, on the same 2 cores "
        "as everything else (CPU per step is an upper bound: every process competes for the same cores).",
        "One worker is one Python event loop: it is bounded by one core; 3 workers are bounded by the share of the "
        "2 shared cores the machine gives them (cores_used), so compare steps_per_cpu_s, not runs/s alone.",
        "The takeover is when the first of the killed worker's runs was dequeued again; the last waits "
        "for a free slot on a surviving worker, which is at its --concurrency when the fleet is saturated.",
    ]
    clients = http_client_cpu_ms()
    return {
        "http_client_cpu_ms": clients,
        "one_process": alone,
        "1_worker": one,
        "3_workers": three,
        "3_workers_one_killed": killed,
        "figures": figures(
            one, three, killed, clients, alone, concurrency=CONCURRENCY, takeover_bound_s=DEAD_S + BEAT_S + POLL_S
        ),
        "notes": notes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="?", type=int, default=RUNS, help=f"runs per batch (default {RUNS})")
    parser.add_argument("--pair", action="store_true", help="only the one-process reference and the 1-worker batch")
    args = parser.parse_args()
    print(json.dumps((reference_pair if args.pair else run)(args.runs), indent=1, default=str))


if __name__ == "__main__":
    main()
