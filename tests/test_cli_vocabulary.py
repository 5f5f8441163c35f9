"""One vocabulary across the commands (issue 37 item 5): `--json` prints JSON on every command that reports
something; `answer --value JSON` and `eval --report FILE` take what `--json` took before (the old spelling still works
this release, with a one-line note); a server is named with `--server NAME=CMD` (or `--server-url NAME=URL`), and
that name is what `--trust` and `--allow-sampling` take. Each command runs in its own process on a real stdio tool
server, with no provider key."""

import json
import subprocess
from pathlib import Path

import pytest

from helpers.cli import clean_env, run_toolwire
from helpers.user_tools import RISKY_TOOLS

EVALS = """
[[servers]]
command = ["{{python}}", "-m", "toolwire_server", "{folder}/tools.py", "--stdio"]

[[tasks]]
name = "adds"
task = "add"
model = "script:{folder}/turns.json"
check = {{ contains = "42" }}
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "tools.py").write_text(RISKY_TOOLS)
    (tmp_path / "turns.json").write_text('[{"calls": [{"name": "add", "args": {"a": 2, "b": 40}}]}, {"text": "42"}]')
    return tmp_path


def toolwire(folder: Path, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    done = run_toolwire(*args, env=clean_env(), cwd=folder)
    assert done.returncode == code, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    return done


def test_a_named_server_is_named_so_everywhere(folder: Path) -> None:
    listed = json.loads(toolwire(folder, "tools", "--server", "calc=toolwire serve tools.py", "--json").stdout)
    assert {tool["server"] for tool in listed} == {"calc"}, listed
    db = str(folder / "runs.db")
    trusted = toolwire(folder, "run", "add", "--model", "script:turns.json", "--server", "calc=toolwire serve tools.py",
                       "--trust", "calc", "--db", db, "--json")  # fmt: skip
    [server] = json.loads(trusted.stdout)["config"]["servers"]
    assert (server["name"], server["trust"]) == ("calc", True), server


def test_a_wrong_or_doubled_server_name_is_one_line(folder: Path) -> None:
    both = ["--server", "a=toolwire serve tools.py", "--server", "a=toolwire serve tools.py"]
    doubled = toolwire(folder, "run", "add", "--model", "test", *both, code=2)
    assert "two tool servers are named a" in doubled.stderr and len(doubled.stderr.strip().splitlines()) == 1
    unknown = toolwire(folder, "run", "add", "--model", "test", "--server", "calc=toolwire serve tools.py",
                       "--trust", "python", code=2)  # fmt: skip
    assert "--trust python: no tool server of this run has that name (its servers: calc)" in unknown.stderr


def test_every_reporting_command_prints_json(folder: Path) -> None:
    db = ["--db", str(folder / "runs.db")]
    server = ["--server", "toolwire serve tools.py"]
    paused = json.loads(
        toolwire(folder, "run", "use the tools", "--model", "test", *server, *db, "--json", code=4).stdout
    )
    run_id = paused["run_id"]
    decided = json.loads(toolwire(folder, "approve", run_id, *db, "--json").stdout)
    assert (decided["run_id"], decided["tool"], decided["decision"]) == (run_id, "send_invoice", "approved"), decided
    resumed = toolwire(folder, "resume", run_id, *db, "--json")
    state = json.loads(resumed.stdout)  # the lines went to stderr
    assert state["status"] == "done" and f"{run_id}: done" in resumed.stderr, resumed.stderr
    waited = json.loads(toolwire(folder, "wait", run_id, *db, "--json").stdout)
    assert waited["status"] == "done" and waited["final_answer"] == state["final_answer"]
    replayed = json.loads(toolwire(folder, "replay", run_id, *db, "--json").stdout)
    assert replayed["identical"] is True and replayed["difference"] is None and replayed["steps"] == len(state["steps"])


def test_eval_report_file_json_and_the_old_spelling(folder: Path) -> None:
    (folder / "evals.toml").write_text(EVALS.format(folder=folder))
    report = folder / "report.json"
    written = toolwire(folder, "eval", "evals.toml", "--report", str(report), "--no-save")
    assert json.loads(report.read_text())["total"]["success_rate"] == 1.0 and "note:" not in written.stderr
    printed = toolwire(folder, "eval", "evals.toml", "--json", "--no-save")
    assert json.loads(printed.stdout)["total"]["successes"] == 1  # the table went to stderr
    assert "adds" in printed.stderr
    old = folder / "old.json"
    before = toolwire(folder, "eval", "evals.toml", "--json", str(old), "--no-save")
    assert json.loads(old.read_text())["total"]["successes"] == 1
    assert "note: `--json VALUE` is now `--report VALUE`" in before.stderr, before.stderr
