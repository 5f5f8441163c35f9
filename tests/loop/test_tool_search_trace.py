"""`toolwire trace show` says which tools a tool search had loaded, at the step that loaded them: a real run (a
scripted model, the bench's 40-tool catalog server on stdio) searched, called what it found and answered."""

import json
import sys
from pathlib import Path

from helpers.cli import clean_env, run_toolwire
from loop.conftest import REPO

CATALOG = str(REPO / "bench" / "tool_catalog.py")
TURNS = [
    {"calls": [{"name": "search_tools", "args": {"query": "get a CRM contact", "limit": 2}}]},
    {"calls": [{"name": "crm_get_contact", "args": {"contact_id": "c7"}}]},
    {"text": "c7 found"},
]


def test_trace_show_prints_the_tools_a_search_loaded_at_the_step_that_loaded_them(tmp_path: Path) -> None:
    script, db, env = tmp_path / "turns.json", str(tmp_path / "runs.db"), clean_env()
    script.write_text(json.dumps(TURNS))
    server = f"{sys.executable} {CATALOG} 40"
    flags = ("--tool-search", "on", "--db", db, "--json")
    run = run_toolwire("run", "Look up contact c7", "--model", f"script:{script}", "--server", server, *flags, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    run_id = json.loads(run.stdout)["run_id"]
    shown = run_toolwire("trace", "show", run_id, "--db", db, env=env)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    loaded = [line for line in lines if "tools loaded" in line]
    assert loaded == ["step 1 | tools loaded: crm_get_contact, crm_create_contact"]  # said once: step 2 kept them
    search = next(i for i, line in enumerate(lines) if line.startswith("step 1 | search_tools"))
    assert lines.index(loaded[0]) == search + 1  # under the step whose search loaded them
    as_json = json.loads(run_toolwire("trace", "show", run_id, "--db", db, "--json", env=env).stdout)
    assert [step["loaded"] for step in as_json["steps"]] == [["crm_get_contact", "crm_create_contact"]] * 3
