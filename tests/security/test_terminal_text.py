"""Issue 33 §4 and two of §7's defaults. The terminal shows untrusted text exactly, and inert: a model's call and
answer, a tool server's result, progress and question reach `run`, `approvals`, `resume`, `trace show` (and its
waterfall) with Rich markup shown as written (`[x HIDDEN]` is not swallowed, so what a person approves is what the
approval binds) and every control character but newline and tab shown as `\\xNN` (no screen clear, no OSC 52
clipboard write). The commands that read or decide on runs never make a store; `[audit] secret_fields` match keys
whatever their case and separators. Real processes throughout: the `toolwire` command, a stdio tool server, a
PostgreSQL server."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

from helpers.cli import clean_env, run_toolwire
from helpers.postgres import fresh_database
from helpers.servers import stdio_params
from security.hostile_driver import ANSWER, GHOST, ORDER_ID
from security.hostile_tools import C1_CSI, CLEAR, CLIPBOARD, MARKUP
from toolwire_client.mistakes import WAITING

DRIVER = [sys.executable, str(Path(__file__).with_name("hostile_driver.py"))]
SERVER = "toolwire serve tests/security/hostile_tools.py:registry --stdio"
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""What must never reach the terminal from stored text: C0 but tab and newline, DEL, C1."""


def visible(text: str) -> str:
    """Control characters as the terminal shows them."""
    return RAW_CONTROL.sub(lambda found: f"\\x{ord(found[0]):02x}", text)


def toolwire(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`toolwire ARGS --db DB` in its own process, the tests' scripted model known (`run`, `resume`)."""
    return run_toolwire(*args, "--db", str(db), command=DRIVER, env=clean_env(), timeout_s=90)


def inert(done: subprocess.CompletedProcess[str]) -> str:
    """The command's stdout and stderr, checked to hold no raw control character."""
    said = done.stdout + done.stderr
    assert not RAW_CONTROL.search(said), f"raw control characters reached the terminal: {said!r}"
    return said


def started(db: Path, task: str, *args: str) -> tuple[str, subprocess.CompletedProcess[str]]:
    """`toolwire run TASK` on the hostile server: the run's id, and the command's output."""
    done = toolwire(db, "run", task, "--model", "scripted:hostile", "--server", SERVER, *args)
    assert done.returncode in (0, WAITING), done.stderr  # WAITING: a --risky call waits for a person
    found = re.search(r"^run: (\S+) ", done.stdout, re.MULTILINE)
    assert found is not None, done.stdout
    return found[1], done


def test_what_a_person_approves_is_byte_for_byte_what_the_approval_binds(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id, _ = started(db, "refund order A123", "--risky", "refund")
    listing = toolwire(db, "approvals")
    table = inert(listing)
    shown_arguments = json.dumps({"order_id": ORDER_ID}, sort_keys=True)
    assert shown_arguments in table, table  # the whole value, `[x HIDDEN-1 also B999]` and all
    [waiting] = json.loads(toolwire(db, "approvals", "--json").stdout)["waiting"]
    assert waiting["call"]["arguments"] == {"order_id": ORDER_ID}
    shown_hash = waiting["args_hash"][:12]
    assert f"│ {shown_hash} │" in table
    approved = toolwire(db, "approve", run_id, "call_refund", "--hash", shown_hash)
    assert approved.returncode == 0 and f"refund({shown_arguments})" in inert(approved), approved.stderr
    resumed = toolwire(db, "resume", run_id)
    assert resumed.returncode == 0, resumed.stderr
    assert f"answer: {visible(ANSWER)}" in inert(resumed)
    shown = inert(toolwire(db, "trace", "show", run_id, "--wide"))
    assert f"refund({shown_arguments}) [approved by" in shown and f"| refunded {ORDER_ID} |" in shown, shown


def test_server_and_model_text_reaches_the_terminal_exactly_and_inert(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id, run = started(db, "refund order A123", "--risky", "refund")
    live = inert(run)
    result = f"{MARKUP}{visible(CLEAR + CLIPBOARD + C1_CSI)}"
    assert f"order {ORDER_ID}: {result}" in live  # the tool's result in the step row
    assert f"... tool lookup: 1/2 checking {result}" in live  # its progress message, as it came
    assert f"{visible(GHOST)}({{}})" in live  # a tool name the model made up
    trace = inert(toolwire(db, "trace", "show", run_id, "--wide"))
    assert f"order {ORDER_ID}: {result}" in trace and visible(GHOST) in trace
    assert visible(GHOST) in inert(toolwire(db, "trace", "show", run_id, "--waterfall"))
    exported = toolwire(db, "trace", "export", run_id)  # JSON keeps the text (escaped where a terminal would act)
    lookup = json.loads(inert(exported))["steps"][0]["results"][0]
    assert lookup["content"] == f"order {ORDER_ID}: {MARKUP}{CLEAR}{CLIPBOARD}{C1_CSI}"  # the same data

    asked_id, asked_run = started(db, "please confirm")
    assert f"Sure? {result}" in inert(asked_run)
    question = inert(toolwire(db, "approvals"))
    assert "".join(f"Sure? {result}".split()) in "".join(_column(question, "question").split()), question
    answered = toolwire(db, "answer", asked_id, "--json", '{"ok": true}')
    assert answered.returncode == 0, answered.stderr
    inert(answered)
    resumed = toolwire(db, "resume", asked_id)
    assert f"answer: {visible(ANSWER)}" in inert(resumed), resumed.stderr
    assert run_id in inert(toolwire(db, "runs"))


def _column(output: str, header: str) -> str:
    """The text of one column of the Rich table whose header names it: its cells' lines, in order."""
    lines = output.splitlines()
    top = next(i for i, line in enumerate(lines) if header in [cell.strip() for cell in line.split("┃")])
    at = [cell.strip() for cell in lines[top].split("┃")].index(header)
    cells = []
    for line in lines[top + 2 :]:
        if "│" not in line:
            break
        cells.append(line.split("│")[at].strip())
    return " ".join(cells)


READ_COMMANDS = [
    ("runs",),
    ("approvals",),
    ("trace", "show", "run_x"),
    ("trace", "export", "run_x"),
    ("replay", "run_x"),
    ("answer", "run_x", "--decline"),
    ("approve", "run_x"),
    ("reject", "run_x", "--reason", "no"),
    ("resume", "run_x"),
    ("wait", "run_x"),
    ("ui", "--port", "0"),
]


@pytest.mark.parametrize("command", READ_COMMANDS, ids=lambda c: "-".join(c[:2]))
def test_a_command_about_saved_runs_never_makes_a_store(tmp_path: Path, command: tuple[str, ...]) -> None:
    missing = tmp_path / "nowhere" / "dir" / "x.db"
    done = run_toolwire(*command, "--db", str(missing), env=clean_env())
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        f"Error: no run store at {missing}: check --db or $TOOLWIRE_DB (`toolwire run` makes one)"
    ]
    assert not (tmp_path / "nowhere").exists()


def test_audit_of_a_missing_database_makes_none(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "audit.db"
    done = run_toolwire("audit", "--db", str(missing), env=clean_env())
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert str(missing) in done.stderr and not (tmp_path / "nowhere").exists()


@pytest.mark.postgres
def test_a_command_about_saved_runs_makes_no_schema_in_postgres(postgres_url: str) -> None:
    import psycopg

    empty = fresh_database(postgres_url, "t_no_store_here")
    for command in READ_COMMANDS[:3]:
        done = run_toolwire(*command, "--db", empty, env=clean_env())
        assert done.returncode == 1 and done.stderr.startswith("Error: no run store at "), done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "@" not in done.stderr, done.stderr
    with psycopg.connect(empty) as conn:
        tables = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
    assert tables == []


def test_secret_fields_match_keys_whatever_their_case_and_separators(tmp_path: Path) -> None:
    config = tmp_path / "server.toml"
    config.write_text("[audit]\nsqlite = 'audit.db'\narguments = true\nsecret_fields = ['password', 'card_number']\n")
    details = {
        "Password": "hunter2-a",
        "PASSWORD": "hunter2-b",
        "card-number": "4111111111111111",
        "nested": [{"Card Number": "4222222222222222", "cardNumber": "4333333333333333"}],
        "note": "kept",
    }
    anyio.run(_pay, config, details)
    # the server has stopped with its client: its audit writer wrote the rest on the way out
    listed = run_toolwire("audit", "--config", str(config), "--json", env=clean_env())
    assert listed.returncode == 0, listed.stderr
    [record] = json.loads(listed.stdout)
    redacted = "[redacted]"
    assert json.loads(record["arguments"]) == {
        "details": {
            "Password": redacted,
            "PASSWORD": redacted,
            "card-number": redacted,
            "nested": [{"Card Number": redacted, "cardNumber": redacted}],
            "note": "kept",
        }
    }
    for database in tmp_path.glob("audit.db*"):  # the database and its WAL: no secret, not even hashed
        data = database.read_bytes()
        assert b"hunter2" not in data and not re.search(rb"4[123]{15}", data), database


async def _pay(config: Path, details: dict[str, object]) -> None:
    """One call of `pay` on `toolwire serve --config CONFIG --stdio`, the server of this checkout."""
    this_checkout = {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    params = stdio_params("tests/security/secret_tools.py:registry", f"--config={config}", env=this_checkout)
    async with Client(params, read_timeout_seconds=30) as client:
        assert not (await client.call_tool("pay", {"details": details})).is_error
