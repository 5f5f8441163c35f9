"""Separate processes for the durable-run tests: the driver (a run), the CLI (approve, reject, resume), kill -9.
Waits on what they do (a marker file appearing) use helpers.polling."""

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from helpers.cli import TOOLWIRE, run_toolwire
from toolwire_client.assembly.agents import build_agent

if TYPE_CHECKING:
    from toolwire_client.config import ServerSpec
    from toolwire_client.run.state import RunState

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DRIVER = str(HERE / "driver.py")
DEADLINE_S = 60.0


def support_server(support_db: Path) -> "ServerSpec":
    """The support desk's tool server over stdio, its SQLite at `support_db`: the server spec of a run's config."""
    from toolwire_client.config import ServerSpec

    command = [TOOLWIRE, "serve", "examples.support_tools:registry", "--stdio"]
    return ServerSpec(name="support", command=command, env={"TOOLWIRE_SUPPORT_DB": str(support_db)}, cwd=str(REPO))


def _env(extra: dict[str, str] | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DURABLE_", "TOOLWIRE_DB"))}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(HERE), env.get("PYTHONPATH", "")])
    return {**env, **(extra or {})}


def spawn_run(
    db: str, run_id: str, tools_db: Path, gate: Path, *, env: dict[str, str] | None = None, risky: tuple[str, ...] = ()
) -> subprocess.Popen[str]:
    argv = [sys.executable, DRIVER, "run", db, run_id, str(tools_db), str(gate)]
    if risky:
        argv += ["--risky", *risky]
    full_env = _env({"DURABLE_GATE_DIR": str(gate), **(env or {})})
    return subprocess.Popen(argv, cwd=REPO, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def cli(db: str, *args: str, env: dict[str, str] | None = None, real: bool = False) -> subprocess.CompletedProcess[str]:
    """`toolwire ARGS --db DB` in its own process: the installed entry point, or the driver (test script known)."""
    command = [TOOLWIRE] if real else [sys.executable, DRIVER, "cli"]
    return run_toolwire(*args, "--db", db, env=_env(env), timeout_s=DEADLINE_S, command=command)


async def run_cli(
    db: str, *args: str, env: dict[str, str] | None = None, real: bool = False
) -> subprocess.CompletedProcess[str]:
    """cli() from an async test, in a worker thread so the test's event loop keeps running meanwhile."""
    return await anyio.to_thread.run_sync(lambda: cli(db, *args, env=env, real=real))


def cli_popen(db: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, DRIVER, "cli", *args, "--db", db],
        cwd=REPO,
        env=_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def kill9(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=DEADLINE_S)


def kill_pid_in(marker: Path) -> None:
    """Kill the process whose pid a marker holds (an orphaned stdio tool server), if it still runs."""
    with contextlib.suppress(ProcessLookupError, ValueError, FileNotFoundError):
        os.kill(int(marker.read_text()), signal.SIGKILL)


def rows(tools_db: Path, sql: str) -> list[tuple[Any, ...]]:
    """What `sql` reads from the tools' side-effect database. A missing table or a wrong query raises: the tools
    create both tables on their first call, so "nothing written" is a count of 0, never an empty answer."""
    conn = sqlite3.connect(tools_db.resolve().as_uri() + "?mode=rw", uri=True)  # never makes a file; see refunds()
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def tamper(db: str, run_id: str, change: Callable[[dict[str, Any]], None]) -> None:
    """Edit a saved state behind the store's back, as an attacker with database access would."""
    if db.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(db, autocommit=True) as conn:
            row = conn.execute("SELECT state FROM runs WHERE run_id = %s", (run_id,)).fetchone()
            assert row is not None
            state = row[0]
            change(state)
            conn.execute("UPDATE runs SET state = %s::jsonb WHERE run_id = %s", (json.dumps(state), run_id))
        return
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        state = json.loads(conn.execute("SELECT state FROM runs WHERE run_id = ?", (run_id,)).fetchone()[0])
        change(state)
        conn.execute("UPDATE runs SET state = ? WHERE run_id = ?", (json.dumps(state), run_id))
    finally:
        conn.close()


async def load(db: str, run_id: str) -> "RunState":
    from toolwire_client.store import open_store

    store = await open_store(db)
    try:
        return await store.load(run_id)
    finally:
        await store.aclose()


def setup_dirs(tmp_path: Path) -> tuple[Path, Path]:
    """The tools' side-effect database and the gate directory of one test."""
    gate = tmp_path / "gate"
    gate.mkdir()
    return tmp_path / "tools.sqlite3", gate


async def waiting_run(db: str, run_id: str, tools_db: Path, gate: Path) -> "RunState":
    """A run on the durable tools that asked for approval of its refund (started in this process)."""
    import driver  # registers the test's scripted model

    from toolwire_client.config import RunConfig, RunLimits, ServerSpec
    from toolwire_client.store import open_store

    server = ServerSpec(
        name="durable",
        command=[sys.executable, "-m", "toolwire_server", driver.TOOLS, "--stdio"],
        env={"DURABLE_TEST_DB": str(tools_db), "DURABLE_GATE_DIR": str(gate)},
        cwd=str(REPO),
    )
    config = RunConfig(
        model="scripted:durable", servers=[server], limits=RunLimits(max_steps=6), risky_tools=["refund"]
    )
    store = await open_store(db)
    try:
        state = await build_agent(config, store=store).run("Refund 5 USD on A123, leave a note", run_id)
    finally:
        await store.aclose()
    assert state.status == "waiting_for_approval", state.report
    return state
