"""The rough edges a new user hit in the first hour (issue 37 item 8), each through the real `toolwire` command in its
own process, on real stdio tool servers: exit statuses that agree, Ctrl-C, a tool's print(), a rate limit's wait, a
task's progress lines, counts in the singular, `eval` piped, `ui` on a busy port, `--help` by purpose."""

import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from helpers.cli import REPO, TOOLWIRE, clean_env, run_toolwire
from helpers.fake_providers import FakeProvider, Reply, openai_completion
from helpers.polling import wait_until
from helpers.user_tools import SERVER
from helpers.user_tools import TOOLS as FIRST_TOOLS
from toolwire_client.cli import COMMANDS, GROUPS
from toolwire_client.cli.reference import EXIT_BEGIN, EXIT_END, exit_table
from toolwire_client.mistakes import FAILED, INTERRUPTED, TIMED_OUT, WAITING
from toolwire_client.store import open_store
from toolwire_server import texts as server_texts
from toolwire_server.isolation import watchdog

EDGE_TOOLS = """
import sys
import time

import anyio
from toolwire_server import ToolContext


@registry.tool(description="Sleep a while, after writing a marker file.")
def nap(seconds: float, marker: str) -> str:
    open(marker, "w").close()
    time.sleep(seconds)
    return "slept"


@registry.tool(description="Print a line, then answer.")
def noisy() -> str:
    print("hello from a print")
    return "ok"


@registry.tool(task="required", timeout_s=60)
async def build_report(quarter: str, ctx: ToolContext) -> str:
    \"\"\"Build the quarterly report, section by section.\"\"\"
    for part in range(3):
        await ctx.report_progress(part + 1, 3, f"section {part + 1}")
        await anyio.sleep(1.2)  # the tool's work: several polls of the client see the same status message
    return f"report for {quarter} ready"
"""
TOOLS = FIRST_TOOLS + EDGE_TOOLS
"""A new user's first tools.py (helpers/user_tools.py), and the tools whose rough edges these tests try."""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "tools.py").write_text(TOOLS)
    return tmp_path


def script(folder: Path, *turns: object) -> tuple[str, str]:
    """`--model script:FILE` playing these turns."""
    path = folder / f"turns{len(list(folder.glob('turns*.json')))}.json"
    path.write_text(json.dumps(list(turns)))
    return "--model", f"script:{path}"


def calls(name: str, **args: object) -> dict[str, object]:
    return {"calls": [{"name": name, "args": args}]}


def toolwire(folder: Path, *args: str, **env: str) -> "subprocess.CompletedProcess[str]":
    return run_toolwire(*args, "--db", str(folder / "runs.db"), env=clean_env(**env), cwd=folder)


def run_id_of(output: str) -> str:
    found = re.search(r"run: (run_[0-9a-f]+)", output)
    assert found is not None, output
    return found.group(1)


# ---- exit statuses: one table, the same for every command ------------------------------------------------------


def test_the_readme_holds_the_table_of_exit_statuses() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start, end = readme.index(EXIT_BEGIN), readme.index(EXIT_END) + len(EXIT_END)
    assert readme[start:end] == f"{EXIT_BEGIN}\n{exit_table()}\n{EXIT_END}", "run: make readme"


def test_a_run_that_pauses_for_approval_exits_4_as_wait_does_and_resume_agrees(folder: Path) -> None:
    model = script(folder, calls("add", a=2, b=3), {"text": "5"})
    paused = toolwire(folder, "run", "Add 2 and 3", *model, *SERVER, "--risky", "add")
    assert paused.returncode == WAITING, paused.stdout + paused.stderr
    run_id = run_id_of(paused.stdout)
    again = toolwire(folder, "resume", run_id)  # nothing decided yet: still waits
    assert again.returncode == WAITING, again.stdout + again.stderr
    assert f"{run_id}: waiting_for_approval\n" in again.stdout  # not `waiting_for_approval (waiting_for_approval)`
    assert toolwire(folder, "approve", run_id).returncode == 0
    done = toolwire(folder, "resume", run_id)
    assert done.returncode == 0 and f"{run_id}: done (final_answer)" in done.stdout, done.stdout + done.stderr


def test_resume_of_a_finished_run_says_so_before_any_missing_key(folder: Path) -> None:
    with FakeProvider() as provider:
        provider.push(openai_completion("done"))
        model = ("--model", "openai:local-model", "--base-url", provider.openai_url)
        finished = toolwire(folder, "run", "Say done", *model, *SERVER, OPENAI_API_KEY="sk-test")
    assert finished.returncode == 0, finished.stdout + finished.stderr
    run_id = run_id_of(finished.stdout)
    again = toolwire(folder, "resume", run_id)  # no OPENAI_API_KEY here
    assert again.returncode == FAILED, again.stderr
    assert again.stderr.strip() == (
        f"Error: run {run_id} is done; only a run waiting for approval or left running by a crash (or Ctrl-C) can be "
        "resumed"
    )


def test_wait_with_a_timeout_on_a_queued_run_exits_5(folder: Path) -> None:
    servers = folder / "servers.toml"
    servers.write_text('[servers.edges]\ncommand = ["toolwire", "serve", "tools.py:registry", "--stdio"]\n')
    submitted = toolwire(folder, "submit", "Add 2 and 3", "--model", "test", "--server", "edges")
    assert submitted.returncode == 0, submitted.stderr
    run_id = submitted.stdout.strip()
    waited = toolwire(folder, "wait", run_id, "--timeout", "2")  # no worker runs: the run stays queued
    assert waited.returncode == TIMED_OUT, waited.stdout + waited.stderr
    assert waited.stdout.strip() == f"run {run_id} is still running after 2 s; `toolwire wait {run_id}` waits again"


def ctrl_c_once_started(argv: list[str], folder: Path, marker: Path) -> tuple[int, str, str]:
    """`argv` in its own process group, sent SIGINT as a terminal's Ctrl-C is (to the whole group) once its tool call
    started (made `marker`): its exit status and output."""
    proc = subprocess.Popen(
        argv, cwd=folder, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        wait_until(marker.exists, "the tool call to start", proc=proc, timeout_s=60)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out, err


def test_ctrl_c_during_run_saves_it_and_prints_the_resume_line(folder: Path) -> None:
    marker = folder / "napping"
    model = script(folder, calls("nap", seconds=60, marker=str(marker)), {"text": "rested"})
    argv = [TOOLWIRE, "run", "Take a nap", *model, *SERVER, "--db", str(folder / "runs.db")]
    status, out, err = ctrl_c_once_started(argv, folder, marker)
    assert status == INTERRUPTED, out + err
    assert "Aborted!" not in out + err
    run_id = re.search(r"interrupted: run (run_[0-9a-f]+) saved after 1 step; `toolwire resume \1` goes on", out)
    assert run_id is not None, out + err
    resumed = toolwire(folder, "resume", run_id.group(1))  # the call cut off is answered, the run goes on
    assert resumed.returncode == 0 and "answer: rested" in resumed.stdout, resumed.stdout + resumed.stderr


def test_ctrl_c_during_any_other_command_exits_130_without_aborted(folder: Path) -> None:
    marker = folder / "napping"
    argv = [TOOLWIRE, "call", "nap", "seconds=60", f"marker={marker}", *SERVER]
    status, out, err = ctrl_c_once_started(argv, folder, marker)
    assert status == INTERRUPTED and err.strip() == "interrupted", out + err


# ---- what a tool server does wrong, said with its name ------------------------------------------------------------


def test_a_print_in_a_stdio_tool_names_the_server_and_says_stdout_is_the_protocol(folder: Path) -> None:
    done = run_toolwire("call", "noisy", *SERVER, env=clean_env(), cwd=folder)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr
    assert "Failed to parse JSONRPC message" not in done.stderr
    assert done.stderr.strip() == (
        "warning: the tool server 'tools' wrote a line to stdout that is not an MCP message ('hello from a print', "
        "ignored): a stdio server's stdout carries the protocol; print to stderr (print(..., file=sys.stderr)) or use "
        "logging"
    )


# ---- waits and progress, shown as they happen ------------------------------------------------------------------


def test_a_rate_limit_wait_is_said_as_it_starts_and_marked_in_the_waterfall(folder: Path) -> None:
    limited = {"error": {"type": "rate_limit_error", "message": "slow down"}}
    with FakeProvider() as provider:
        provider.push(Reply(status=429, body=limited, headers={"retry-after": "1"}), openai_completion("ok"))
        model = ("--model", "openai:local-model", "--base-url", provider.openai_url)
        done = toolwire(folder, "run", "Say ok", *model, *SERVER, OPENAI_API_KEY="sk-test")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "openai returned 429 rate_limit_error; waiting 1.0 s (as it asked) before try 2 of 4" in done.stderr
    shown = toolwire(folder, "trace", "show", run_id_of(done.stdout), "--waterfall")
    assert "↻ 2 attempts  ⏸ waited 1.0 s" in shown.stdout, shown.stdout + shown.stderr


def test_a_tasks_progress_lines_come_once_each_without_a_stray_count(folder: Path) -> None:
    model = script(folder, calls("build_report", quarter="Q3"), {"text": "done"})
    done = toolwire(folder, "run", "Build the Q3 report", *model, *SERVER)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line.strip() for line in done.stdout.splitlines() if line.strip().startswith("... tool")]
    assert lines == [f"... tool build_report: {n}/3: section {n}" for n in (1, 2, 3)], done.stdout


# ---- words ------------------------------------------------------------------------------------------------------


def test_counts_take_the_singular(folder: Path) -> None:
    model = script(folder, calls("add", a=1), calls("add", a=2))
    stopped = toolwire(folder, "run", "Add", *model, *SERVER, "--max-steps", "1")
    assert stopped.returncode == FAILED, stopped.stdout + stopped.stderr
    assert "stopped at the step limit after 1 step;" in stopped.stdout, stopped.stdout
    assert server_texts.limited("add", "ops", "in_flight", 1, None).startswith("add: 1 call in flight at once")
    assert "2 calls per minute" in server_texts.limited("add", "ops", "per_minute", 2, 3.0)


def test_an_idle_servers_short_stall_is_not_reported_a_long_one_is(caplog: pytest.LogCaptureFixture) -> None:
    async def stall(seconds: float) -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(watchdog.watch)
            await anyio.sleep(0.2)  # the watchdog is ticking
            time.sleep(seconds)  # noqa: ASYNC251 - the loop held by no tool (a busy machine, a paused process)
            await anyio.sleep(0.2)  # the watchdog's next tick sees it
            group.cancel_scope.cancel()

    with caplog.at_level(logging.WARNING, logger="toolwire.server"):
        anyio.run(stall, 0.3)
        assert not [r for r in caplog.records if "stalled" in r.getMessage()]
        anyio.run(stall, 1.3)
    [said] = [r.getMessage() for r in caplog.records if "stalled" in r.getMessage()]
    assert said.endswith("with no tool step holding it (the process was paused, or the machine is too busy to run it)")


# ---- eval piped, ui on a busy port, --help ------------------------------------------------------------------------


def test_eval_piped_prints_whole_column_headers(tmp_path: Path) -> None:
    strategies = REPO / "examples" / "evals" / "strategies.toml"
    done = run_toolwire("eval", str(strategies), "--no-save", env=clean_env(), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    header = next(line for line in done.stdout.splitlines() if "task" in line and "success" in line)
    assert "…" not in header
    assert all(column in header for column in ("right tools", "right order", "steps", "tokens", "cost", "latency"))


def test_ui_on_a_busy_port_is_one_line_and_exit_1(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    anyio.run(_empty_store, db)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_toolwire("ui", "--db", db, "--port", str(port), env=clean_env(), timeout_s=60)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip() == (
        f"Error: port {port} on 127.0.0.1 is in use (another server listens there): stop it or choose another --port"
    )


async def _empty_store(db: str) -> None:
    await (await open_store(db)).aclose()


def test_help_lists_the_commands_by_purpose() -> None:
    done = run_toolwire("--help", env=clean_env())
    assert done.returncode == 0, done.stderr
    sections = re.findall(r"^(\S[^\n]*):\n((?:  \S+ +[^\n]*\n?)+)", done.stdout, flags=re.M)
    listed = {title: [row.split()[0] for row in rows.splitlines()] for title, rows in sections if title != "Options"}
    assert list(listed) == [*GROUPS, *(["Other"] if "Other" in listed else [])]
    named = [name for names in listed.values() for name in names]
    assert sorted(named) == sorted(COMMANDS)  # each command once
    assert listed["Fleet"] == ["worker", "submit", "wait"] and listed["Serve tools"] == ["serve", "dev", "check"]


def test_the_readmes_in_process_agent_prints_what_the_mcp_one_does(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")

    def python_blocks(heading: str) -> list[str]:
        part = readme.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
        return re.findall(r"```python\n(.*?)```", part, flags=re.S)

    (tools, _), [agent] = python_blocks("Ten lines"), python_blocks("The same agent in one process")
    printed = re.findall(r"```text\n(.*?)```", readme.split("\n## Ten lines\n", 1)[1], flags=re.S)[0]
    (tmp_path / "tools.py").write_text(tools)
    (tmp_path / "agent_inproc.py").write_text(agent)
    done = subprocess.run(
        [sys.executable, "agent_inproc.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == printed, done.stdout + done.stderr[-2000:]


def test_approvals_names_a_decided_run_nothing_went_on_with_and_the_command_that_does(folder: Path) -> None:
    model = script(folder, calls("add", a=2, b=3), {"text": "5"})
    paused = toolwire(folder, "run", "Add 2 and 3", *model, *SERVER, "--risky", "add")
    run_id = run_id_of(paused.stdout)
    assert toolwire(folder, "approve", run_id).returncode == 0  # decided; no resume (a console's that failed)
    listed = toolwire(folder, "approvals")
    assert listed.returncode == 0, listed.stderr
    said = " ".join(listed.stdout.split())
    assert (
        f"run {run_id} waits for nobody now (its calls are decided) but has not gone on: the console resumes runs "
        "with its own environment (provider keys, OPENAI_BASE_URL and the like); "
        f"`toolwire resume {run_id}` in the shell the run was started from goes on"
    ) in said, listed.stdout
    assert json.loads(toolwire(folder, "approvals", "--json").stdout)["decided_not_resumed"] == [run_id]


def test_a_server_that_never_answers_initialize_is_quoted_with_its_log(folder: Path) -> None:
    """As `npx` offline: it writes its trouble on stderr and never speaks MCP (the start waits its 60 s)."""
    stuck = folder / "stuck.py"
    stuck.write_text("import sys, time\nprint('npm error network: request to the registry failed', file=sys.stderr)\n"
                     "sys.stderr.flush()\ntime.sleep(600)\n")  # fmt: skip
    done = toolwire(folder, "run", "x", "--model", "test", "--server", f"{sys.executable} {stuck}")
    assert done.returncode == FAILED, done.stdout + done.stderr
    line = done.stderr.strip()
    assert len(line.splitlines()) == 1, line
    assert re.fullmatch(
        r"Error: tool server `\S+ \S+stuck.py` did not answer MCP's initialize within 60 s: npm error network: request "
        r"to the registry failed; its last line on stderr is quoted; a command that fetches its server first \(npx, "
        r"uvx\) waits on the network: run it once by hand to see it start \(tool server output: \S+\.log\)",
        line,
    ), line
