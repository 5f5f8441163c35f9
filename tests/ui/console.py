"""What the run console's tests share: waiting refund runs made on the real support tools, the console started as
`toolwire ui` in its own process, and Debian's chromium found on PATH (the tests skip, saying so, without it)."""

import json
import re
import shutil
import sqlite3
import subprocess
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio

from helpers.cli import REPO, TOOLWIRE, clean_env
from helpers.servers import free_port, stop_process, wait_until_ok
from toolwire_client.assembly.agents import build_agent
from toolwire_client.config import RunConfig, RunLimits, ServerSpec
from toolwire_client.run.state import PendingCall, RunState, args_hash
from toolwire_client.store import open_store
from toolwire_client.store.answers import recent_answers
from toolwire_shared.elicitation import InputWanted
from toolwire_shared.messages import ToolCall

T = TypeVar("T")
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


ARGS = {"order_id": "A123", "amount_cents": 2500}


def saved(db: str, state: RunState) -> None:
    """`state` saved in the store at `db` (made if missing)."""

    async def save() -> None:
        store = await open_store(db)
        try:
            await store.save(state)
        finally:
            await store.aclose()

    anyio.run(save)


def in_thread(work: Callable[..., T], *args: Any) -> T:
    """`work(*args)` in a thread of its own: it may run an event loop (anyio.run), and playwright's sync API runs one
    in the test's thread."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(work, *args).result()


def waiting_run(db: str, run_id: str, agent: str = "agent") -> None:
    """A run of `agent` saved as waiting on one refund (no model needed: only the decision is under test)."""
    call = ToolCall(id="call_1", name="issue_refund", arguments=ARGS)
    pending = PendingCall(call=call, state="pending_approval", args_hash=args_hash(ARGS))
    state = RunState(run_id=run_id, agent_name=agent, task="Refund A123", model="m", pending=[pending])
    state.status = "waiting_for_approval"
    saved(db, state)


def question_run(db: str, run_id: str, url: str | None = None, agent: str = "agent") -> None:
    """A run saved as waiting on a tool's form question (who the table is for, and for how many), or with `url`, on
    a URL-mode question sending the person there."""
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "party": {"type": "integer"}}}
    wanted = (
        InputWanted(key="q1", mode="url", message="Log in to the bank", url=url, era="2026-07-28")
        if url
        else InputWanted(key="q1", mode="form", message="Who is it for?", requested_schema=schema, era="2026-07-28")
    )
    call = ToolCall(id="call_book", name="book_table", arguments={})
    pending = PendingCall(call=call, state="pending_input", args_hash=args_hash({}), input=wanted)
    state = RunState(run_id=run_id, agent_name=agent, task="Book a table", model="m", pending=[pending])
    state.status = "waiting_for_approval"
    saved(db, state)


def answered(db: str, run_id: str) -> list[tuple[str, str | None, str | None]]:
    async def read() -> list[tuple[str, str | None, str | None]]:
        store = await open_store(db)
        try:
            return [(a["action"], a["content"], a["by"]) for a in await recent_answers(store) if a["run_id"] == run_id]
        finally:
            await store.aclose()

    return anyio.run(read)


def decided(db: str, run_id: str) -> list[tuple[str, str | None]]:
    async def read() -> list[tuple[str, str | None]]:
        store = await open_store(db)
        try:
            return [(d.decision, d.decided_by) for d in await store.decisions(run_id)]
        finally:
            await store.aclose()

    return anyio.run(read)


def form_of(page: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="(csrf|hash|next)" value="([^"]*)"', page))


def people_file(
    folder: Path, people: dict[str, tuple[str, list[str], list[str]]], agents: dict[str, str] | None = None
) -> Path:
    """A console's tokens file in `folder`: person -> (their token, the agents whose runs they see and decide, the
    tools they may decide), and `agents` (agent -> its tool token) as the tool server's file holds them."""
    path = folder / "people.toml"
    tables = [
        f'[agents.{name}]\ntoken = {json.dumps(token)}\ntools = ["*"]\n' for name, token in (agents or {}).items()
    ]
    tables += [
        f"[people.{name}]\ntoken = {json.dumps(token)}\nagents = {json.dumps(seen)}\ntools = {json.dumps(tools)}\n"
        for name, (token, seen, tools) in people.items()
    ]
    path.write_text("".join(tables))
    return path


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
