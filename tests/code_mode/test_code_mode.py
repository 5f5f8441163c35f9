"""Code mode against real tool servers (the support ledger over stdio and over HTTP): the model's one run_code call
fans out over the tools; each of the script's calls is a call of the script's child run (its own row, its own span
under run_code's); a script that does not parse, raises, or passes a limit comes back as a readable error; without
Monty, --code-mode says how to get it."""

import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from helpers.cli import TOOLWIRE, clean_env
from helpers.servers import HttpServer
from helpers.telemetry import install
from store.procs import load
from toolwire_client.assembly.agents import build_agent
from toolwire_client.config import RunConfig, RunLimits, ServerSpec
from toolwire_client.models.seed_scripts import SCRIPTS, last_results
from toolwire_client.run.ordering import check_order
from toolwire_client.run.state import RunState
from toolwire_client.store import open_store
from toolwire_client.strategies.code_mode import CodeMode
from toolwire_client.tools.code_mode.source import script_run_id
from toolwire_shared.messages import AssistantMessage, Message, ToolCall

REPO = Path(__file__).resolve().parents[2]
LEDGER = "examples.support_tools:ledger"

FAN_OUT = """
import asyncio
orders = await search_orders(customer_id="cus_7001")
refunds = await asyncio.gather(*[list_refunds(order_id=o["order_id"]) for o in orders])
totals = {o["order_id"]: sum(r["amount_cents"] for r in rs) for o, rs in zip(orders, refunds)}
largest = max(totals, key=lambda k: totals[k])
print(len(orders), "orders")
{"total_cents": sum(totals.values()), "largest": largest}
"""


def _codes(messages: list[Message], codes: list[str]) -> AssistantMessage:
    """One run_code call per step, each script of `codes` in turn; then the results, joined, as the answer."""
    asked = sum(isinstance(m, AssistantMessage) for m in messages)
    if asked < len(codes):
        call = ToolCall(id=f"call_code_{asked}", name="run_code", arguments={"code": codes[asked]})
        return AssistantMessage(tool_calls=[call])
    return AssistantMessage(text=" || ".join(r.content for r in last_results(messages)))


SCRIPTS["code_fan_out"] = lambda messages: _codes(messages, [FAN_OUT])


def expected_totals(support_db: Path) -> tuple[int, str]:
    """The fan-out's answer, read from the database itself."""
    with sqlite3.connect(support_db) as conn:
        orders = [
            row[0]
            for row in conn.execute(
                "SELECT id FROM orders WHERE customer_id = 'cus_7001' ORDER BY created_at DESC LIMIT 20"
            )
        ]
        totals = {
            o: conn.execute("SELECT COALESCE(SUM(amount_cents), 0) FROM refunds WHERE order_id = ?", (o,)).fetchone()[0]
            for o in orders
        }
    return sum(totals.values()), max(totals, key=lambda k: totals[k])


@pytest.fixture(params=["stdio", "http"])
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[ServerSpec, Path]]:
    support_db = tmp_path / "support.sqlite3"
    env = {"TOOLWIRE_SUPPORT_DB": str(support_db)}
    if request.param == "stdio":
        yield (
            ServerSpec(name="support", command=[TOOLWIRE, "serve", LEDGER, "--stdio"], env=env, cwd=str(REPO)),
            support_db,
        )
        return
    with HttpServer(LEDGER, env=env) as server:
        yield ServerSpec(name="support", url=server.url), support_db


async def run_scripted(db: str, model: str, server: ServerSpec, only: bool = True) -> RunState:
    config = RunConfig(model=model, servers=[server], limits=RunLimits(max_steps=12), code_mode=CodeMode(only=only))
    store = await open_store(db)
    try:
        return await build_agent(config, store=store).run("total the refunds")
    finally:
        await store.aclose()


async def toolwire(*args: str) -> "subprocess.CompletedProcess[str]":
    """The installed `toolwire ARGS` in its own process (a worker thread waits for it)."""
    argv = [TOOLWIRE, *args]
    return await anyio.to_thread.run_sync(
        lambda: subprocess.run(argv, capture_output=True, text=True, env=clean_env(), cwd=REPO, timeout=120)
    )


async def test_one_script_fans_out_and_each_call_is_a_call_of_the_run(
    ledger: tuple[ServerSpec, Path], tmp_path: Path
) -> None:
    server, support_db = ledger
    db = str(tmp_path / "runs.sqlite3")
    telemetry = install()
    telemetry.spans.clear()
    state = await run_scripted(db, "scripted:code_fan_out", server)
    assert state.status == "done", state.report
    total, largest = expected_totals(support_db)
    [result] = [r for step in state.steps for r in step.results]
    assert result.name == "run_code" and not result.is_error, result.content
    printed, value = result.content.split("\n")
    assert printed == "20 orders" and json.loads(value) == {"total_cents": total, "largest": largest}
    assert [t["name"] for t in state.config["tools"]] == ["run_code"]  # --code-mode only: nothing else offered

    script = await load(db, script_run_id(state.run_id, result.call_id))
    assert (script.status, script.parent_run_id, script.parent_call_id) == ("done", state.run_id, result.call_id)
    batches = [[c.name for c in step.tool_calls] for step in script.steps]
    assert batches == [["search_orders"], ["list_refunds"] * 20]  # the 20 lookups one batch: run at once
    assert all(len(s.results) == len(s.tool_calls) and not any(r.is_error for r in s.results) for s in script.steps)
    assert not script.pending
    check_order(script.messages)

    shown = await toolwire("trace", "show", state.run_id, "--db", db)
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("step 1 | run_code("), shown.stdout + shown.stderr
    assert lines[1] == f"  script {script.run_id}: run_code: import asyncio", shown.stdout
    nested = [line for line in lines if line.startswith("  step ")]
    assert len(nested) == 21 and nested[0].startswith('  step 1 | search_orders({"customer_id": "cus_7001"})')

    spans = telemetry.spans.get_finished_spans()
    [code_span] = [s for s in spans if s.name == "execute_tool run_code"]
    inner = [s for s in spans if s.name in ("execute_tool search_orders", "execute_tool list_refunds")]
    assert len(inner) == 21
    assert all(s.parent is not None and s.context.trace_id == code_span.context.trace_id for s in inner)
    by_id = {s.context.span_id: s for s in spans}

    def under_run_code(span: object) -> bool:
        while span is not None and getattr(span, "parent", None) is not None:
            span = by_id.get(span.parent.span_id)  # type: ignore[attr-defined]
            if span is code_span:
                return True
        return False

    assert all(under_run_code(s) for s in inner)

    for run_id in (state.run_id, script.run_id):  # the run from its record; the script run again over its record
        replayed = await toolwire("replay", run_id, "--db", db)
        assert f"{run_id}: identical" in replayed.stdout, replayed.stdout + replayed.stderr


HOSTILE = {
    "does not parse": ("x = (1,\ny = 2", "the script does not parse at line 2"),
    "raises": ("a = 1\nb = {}\nb['missing']", "the script raised at line 3 (b['missing']): KeyError"),
    "imports os": ("import os\nos.listdir('/')", "PermissionError"),
    "opens a file": ("open('/etc/passwd').read()", "PermissionError"),
    "reads the environment": ("import os\nos.environ.get('HOME')", "not supported"),
    "imports subprocess": ("import subprocess", "No module named 'subprocess'"),
    "loops forever": ("while True:\n    pass", "ran past its limit of 1 s of computing"),
    "allocates a lot": ("x = 'a' * (10**9)\nlen(x)", "used more than its limit of 16 MB"),
    "prints a lot": ("for i in range(10**6):\n    print('xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx')", "printed more than"),
    "calls too often": (
        "for n in range(10):\n    await search_orders(customer_id='cus_7001')",
        "the script stopped at line 2: it made more than 3 tool calls",
    ),
    "calls an unknown tool": ("await delete_everything()", "NameError: name 'delete_everything' is not defined"),
    "catches a tool error": (
        "try:\n    await get_order(order_id='NOPE')\nexcept Exception as e:\n    r = 'caught: ' + str(e)\nr",
        "caught: get_order failed (tool_failed): ",
    ),
}


async def test_a_hostile_or_broken_script_comes_back_as_a_readable_error(tmp_path: Path) -> None:
    support_db = tmp_path / "support.sqlite3"
    env = {"TOOLWIRE_SUPPORT_DB": str(support_db)}
    server = ServerSpec(name="support", command=[TOOLWIRE, "serve", LEDGER, "--stdio"], env=env, cwd=str(REPO))
    codes = [code for code, _ in HOSTILE.values()]
    SCRIPTS["code_hostile"] = lambda messages: _codes(messages, codes)
    options = CodeMode(max_script_s=1, max_memory_mb=16, max_tool_calls=3, max_output_chars=1000)
    config = RunConfig(
        model="scripted:code_hostile", servers=[server], limits=RunLimits(max_steps=20), code_mode=options
    )
    store = await open_store(str(tmp_path / "runs.sqlite3"))
    try:
        state = await build_agent(config, store=store).run("try these")
    finally:
        await store.aclose()
    assert state.status == "done", state.report
    results = [r for step in state.steps for r in step.results]
    assert len(results) == len(HOSTILE)
    for (case, (_, said)), result in zip(HOSTILE.items(), results, strict=True):
        assert said in result.content, f"{case}: {result.content}"
        assert "Traceback" not in result.content and "toolwire" not in result.content, f"{case}: {result.content}"
        assert result.is_error == (case != "catches a tool error"), f"{case}: {result.content}"
    with sqlite3.connect(support_db) as conn:  # the script that called too often made 3 calls, never a 4th
        assert conn.execute("SELECT COUNT(*) FROM orders").fetchone()[0] > 0


def test_without_monty_code_mode_says_how_to_get_it(tmp_path: Path) -> None:
    hide = "import sys; sys.modules['pydantic_monty'] = None; from toolwire_client.cli import main; main()"
    argv = [sys.executable, "-c", hide, "run", "hello", "--model", "scripted:support_demo", "--code-mode"]
    argv += ["--server", f"{TOOLWIRE} serve {LEDGER} --stdio", "--db", str(tmp_path / "runs.sqlite3")]
    done = subprocess.run(argv, capture_output=True, text=True, env=clean_env(), cwd=REPO)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "pip install 'toolwire[code]'" in line and "Traceback" not in done.stderr


async def test_toolwire_run_code_mode_shows_the_scripts_calls_in_its_step_table(tmp_path: Path) -> None:
    turns = tmp_path / "turns.json"
    turns.write_text(json.dumps([{"calls": [{"name": "run_code", "args": {"code": FAN_OUT}}]}, {"text": "totalled"}]))
    server = f"{TOOLWIRE} serve {LEDGER} --stdio"
    env = {"TOOLWIRE_SUPPORT_DB": str(tmp_path / "support.sqlite3")}
    argv = [TOOLWIRE, "run", "total the refunds", "--model", f"script:{turns}", "--code-mode", "only"]
    argv += ["--server", server, "--server-env", "TOOLWIRE_SUPPORT_DB", "--db", str(tmp_path / "runs.sqlite3")]
    done = await anyio.to_thread.run_sync(
        lambda: subprocess.run(argv, capture_output=True, text=True, env=clean_env(**env), cwd=REPO, timeout=120)
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line for line in done.stdout.splitlines() if "| " in line]
    assert rows[0].startswith('    script step 1 | search_orders({"customer_id": "cus_7001"}) | '), done.stdout
    assert sum(row.startswith("    script step 2 | list_refunds(") for row in rows) == 20, done.stdout
    assert rows[21].startswith("  step 1 | run_code("), done.stdout  # after the calls it made
