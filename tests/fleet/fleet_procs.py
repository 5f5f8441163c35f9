"""Worker processes and run bookkeeping for the fleet tests (and bench/fleet_bench.py): start `toolwire worker`s,
submit scripted runs on the real support tool server (one SQLite per run, so its refunds can be counted), decide
the approvals, poll the run store until every run has ended."""

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from helpers.cli import TOOLWIRE, clean_env, run_toolwire
from helpers.polling import await_until
from toolwire_client.config import RunConfig, RunLimits, ServerSpec
from toolwire_client.fleet.submit import FleetClient, notify, submit
from toolwire_client.store import SqlRunStore
from toolwire_client.store import approvals as decisions

REPO = Path(__file__).resolve().parents[2]
FAST_TAKEOVER = {"TOOLWIRE_FLEET_BEAT_S": "0.5", "TOOLWIRE_FLEET_DEAD_S": "3"}
"""A worker silent for 3 s is dead in these tests (default 5 s), so a kill -9 is taken over quickly."""


def toolwire(*args: str, timeout_s: float = 60) -> subprocess.CompletedProcess[str]:
    """The `toolwire` command, with this checkout's packages."""
    return run_toolwire(*args, env=clean_env(PYTHONPATH=str(REPO)), timeout_s=timeout_s)


def support_server(tmp: Path) -> ServerSpec:
    """The support desk over stdio, started as `python -m toolwire_server` (cheaper than the CLI entry point), as a
    worker's servers file names it: each run its own database (`support_db`), so its refunds can be counted."""
    command = [sys.executable, "-m", "toolwire_server", "examples.support_tools:registry", "--stdio"]
    env = {"TOOLWIRE_SUPPORT_DB": str(tmp / "support-{run_id}.sqlite3")}
    return ServerSpec(name="support", command=command, env=env, cwd=str(REPO))


def support_db(tmp: Path, run_id: str) -> Path:
    """The database `support_server(tmp)` gives run `run_id`."""
    return tmp / f"support-{run_id}.sqlite3"


def servers_file(path: Path, specs: list[ServerSpec]) -> Path:
    """A worker's servers file (`toolwire worker --servers FILE`) holding `specs` under their names."""

    def toml(value: Any) -> str:
        if isinstance(value, dict):
            return "{ " + ", ".join(f"{k} = {toml(v)}" for k, v in value.items()) + " }"
        if isinstance(value, list):
            return "[" + ", ".join(toml(v) for v in value) + "]"
        return json.dumps(value)  # a JSON string, number or bool is TOML too

    lines = []
    for spec in specs:
        lines.append(f"[servers.{spec.name}]")
        lines += [f"{k} = {toml(v)}" for k, v in spec.model_dump(exclude_defaults=True, exclude={"name"}).items()]
    path.write_text("\n".join(lines) + "\n")
    return path


@dataclass
class Worker:
    proc: subprocess.Popen[bytes]
    log: Path
    _out: IO[bytes] = field(repr=False)

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill9()
        self._out.close()


def start_worker(
    db: str,
    log: Path,
    concurrency: int = 4,
    extra: tuple[str, ...] = (),
    fast_takeover: bool = True,
    command: tuple[str, ...] = (TOOLWIRE,),
    env_extra: dict[str, str] | None = None,
    servers: list[ServerSpec] | None = None,
) -> Worker:
    """`toolwire worker` (or `command worker`, e.g. a driver with a test's scripted model registered), with a
    servers file of `servers` beside its log."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLWIRE_DB", "TOOLWIRE_FLEET_"))}
    env |= FAST_TAKEOVER if fast_takeover else {}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env |= env_extra or {}
    out = log.open("wb")
    argv = [*command, "worker", "--db", db, "--concurrency", str(concurrency), *extra]
    if servers:
        argv += ["--servers", str(servers_file(log.with_suffix(".servers.toml"), servers))]
    proc = subprocess.Popen(argv, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    return Worker(proc, log, out)


def started(worker: Worker) -> bool:
    if worker.proc.poll() is not None:
        raise AssertionError(f"worker exited {worker.proc.returncode}: {worker.log.read_text()}")
    return "taking runs from queue" in worker.log.read_text()


@dataclass
class Planned:
    """What the test means to happen to one submitted run."""

    run_id: str
    support_db: Path
    refund: bool
    approve: bool


async def submit_runs(
    store: SqlRunStore, fleet: FleetClient, tmp: Path, n: int, refunds_every: int = 2
) -> list[Planned]:
    """n runs: every `refunds_every`-th a refund that asks for approval (of those, every fifth is rejected), the
    others a GST question with no risky call."""
    planned = []
    for i in range(n):
        refund = i % refunds_every == 0
        model = "scripted:support_demo" if refund else "scripted:recovers"
        task = "Refund one item of order A123" if refund else "What does order A123 cost with GST?"
        config = RunConfig(model=model, servers=[ServerSpec(name="support")], limits=RunLimits(max_steps=8))
        run_id = await submit(store, fleet, task, config)  # the workers' servers file: support_server(tmp)
        approve = refund and (i // refunds_every) % 5 != 4
        planned.append(Planned(run_id, support_db(tmp, run_id), refund, approve=approve))
    return planned


async def decide_waiting(store: SqlRunStore, fleet: FleetClient, planned: dict[str, Planned]) -> int:
    """Approve or reject every run that waits now, as planned, and tell its workflow; how many."""
    decided = 0
    for state in await store.waiting():
        if not any(p.state == "pending_approval" for p in state.pending):
            continue  # decided already; its next leg has not started yet
        plan = planned[state.run_id]
        if plan.approve:
            await decisions.approve(store, state.run_id, None)
        else:
            await decisions.reject(store, state.run_id, None, "not this one")
        await notify(store, fleet, state.run_id)
        decided += 1
    return decided


async def statuses(store: SqlRunStore, run_ids: list[str]) -> dict[str, str]:
    return {run_id: (await store.load(run_id)).status for run_id in run_ids}


def refunds(support_db: Path) -> int:
    """Refund rows the tool server wrote for one run (its database exists once the run's first call ran). Opened
    read-write, never created: a tool server that died mid-write (its worker killed -9) leaves a hot journal, which
    only a writable connection rolls back (read-only, the read fails); the rolled-back write never happened."""
    conn = sqlite3.connect(support_db.resolve().as_uri() + "?mode=rw", uri=True)
    try:
        made = "SELECT COUNT(*) FROM refunds WHERE id NOT LIKE 're_seed_%'"  # not the ledger's seeded ones
        return int(conn.execute(made).fetchone()[0])
    finally:
        conn.close()


ENDED = ("done", "stopped", "failed")


async def drive_all(
    store: SqlRunStore, fleet: FleetClient, planned: list[Planned], timeout_s: float, **bounds: Any
) -> float:
    """Decide approvals as they come until every run has ended; the seconds it took."""
    by_id = {p.run_id: p for p in planned}
    seen: dict[str, str] = {}
    started_at = time.monotonic()

    async def all_ended() -> bool:
        await decide_waiting(store, fleet, by_id)
        seen.update(await statuses(store, list(by_id)))
        return all(s in ENDED for s in seen.values())

    def left() -> str:
        open_ = [(r, s) for r, s in seen.items() if s not in ENDED]
        return f"{len(open_)} runs not ended, e.g. {open_[:3]}"

    await await_until(all_ended, "every run to end", timeout_s=timeout_s, interval_s=0.2, detail=left, **bounds)
    return time.monotonic() - started_at


def pending_of(db: str, pid: int) -> list[str]:
    """The workflows a worker process is running now (DBOS tags each with its executor id: host-pid-random)."""
    import psycopg

    with psycopg.connect(db, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT workflow_uuid FROM dbos.workflow_status WHERE status = 'PENDING' AND executor_id LIKE %s",
            (f"{socket.gethostname()}-{pid}-%",),
        ).fetchall()
    return [r[0] for r in rows]


def restarted(db: str, workflow_ids: list[str], dead_pid: int) -> list[tuple[str, float]]:
    """(executor, start time) of the given workflows, once each was dequeued again by another executor."""
    import psycopg

    with psycopg.connect(db, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT executor_id, started_at_epoch_ms FROM dbos.workflow_status WHERE workflow_uuid = ANY(%s)",
            (workflow_ids,),
        ).fetchall()
    dead = f"{socket.gethostname()}-{dead_pid}-"
    return [(r[0], r[1] / 1000) for r in rows if r[0] and not r[0].startswith(dead) and r[1] is not None]
