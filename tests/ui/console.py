"""What the run console's tests share: waiting refund runs made on the real support tools, the console started as
`toolwire ui` in its own process, and Debian's chromium found on PATH (the tests skip, saying so, without it)."""

import shutil
import sqlite3
import subprocess
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import anyio

from helpers.cli import REPO, TOOLWIRE, clean_env
from helpers.servers import free_port, stop_process, wait_until_ok
from toolwire_client.assembly.agents import build_agent
from toolwire_client.config import RunConfig, RunLimits, ServerSpec
from toolwire_client.run.state import RunState
from toolwire_client.store import open_store

CHROMIUM = shutil.which("chromium")
NO_CHROMIUM = "Debian's chromium is not installed (apt-get install chromium; .ci/run installs it)"


def support_server(support_db: Path) -> ServerSpec:
    command = [TOOLWIRE, "serve", "examples.support_tools:registry", "--stdio"]
    return ServerSpec(name="support", command=command, env={"TOOLWIRE_SUPPORT_DB": str(support_db)}, cwd=str(REPO))


def waiting_runs(db: str, support_db: Path, tasks: list[str]) -> list[RunState]:
    """One run per task on the scripted support model, each stopped at its refund (risky by the server's policy),
    made side by side."""
    servers = [support_server(support_db)]
    config = RunConfig(model="scripted:support_demo", servers=servers, limits=RunLimits(max_steps=8))
    found: dict[str, RunState] = {}

    async def main() -> None:
        store = await open_store(db, connections=len(tasks))
        try:
            async with anyio.create_task_group() as group:
                for task in tasks:

                    async def one(task: str = task) -> None:
                        found[task] = await build_agent(config, store=store).run(task)

                    group.start_soon(one)
        finally:
            await store.aclose()

    anyio.run(main)
    return [found[task] for task in tasks]


def refunded_cents(support_db: Path, order_id: str) -> int:
    conn = sqlite3.connect(support_db)
    try:
        row = conn.execute("SELECT COALESCE(SUM(amount_cents), 0) FROM refunds WHERE order_id = ?", (order_id,))
        return int(row.fetchone()[0])
    finally:
        conn.close()


async def made(db: str) -> None:
    """The (empty) run store at `db`, as `toolwire run` would leave it."""
    await (await open_store(db)).aclose()


@contextmanager
def console(
    db: str,
    folder: Path,
    *args: str,
    meanwhile: Callable[[], object] = lambda: None,
    command: Sequence[str] = (TOOLWIRE,),
) -> Iterator[str]:
    """`toolwire ui --db DB --port P ARGS` running; its base URL. `meanwhile` runs while the console starts;
    `command` replaces the entry point (a driver script that registers a test's scripted model, for the runs the
    console resumes)."""
    anyio.run(made, db)  # `toolwire ui` shows a store, it makes none: the runs `meanwhile` saves go into this one
    port = free_port()
    log = folder / f"ui-{port}.log"
    argv = [*command, "ui", "--db", db, "--port", str(port), *args]
    with log.open("w") as out:
        proc = subprocess.Popen(argv, cwd=REPO, env=clean_env(), stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        meanwhile()
        wait_until_ok(f"{url}/static/ui.css", proc, log, 60, "toolwire ui")
        yield url
    finally:
        stop_process(proc)
