"""`toolwire --help` and `--version` start without importing the sub-commands, the run store's drivers or the MCP
SDK: a module count (not a time) in a fresh process, and the command list's summaries are each command's own."""

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from helpers.cli import run_toolwire
from toolwire_client.cli import COMMANDS, main
from toolwire_client.cli.help_pages import PAGES, stored_page
from toolwire_client.cli.summaries import SUMMARIES

MAX_MODULES = 150
"""At most this many modules in sys.modules when `--help` or `--version` has answered (1094 and 563 before; `serve
--help` 1002: the tool server's package imported its whole server)."""

COUNT = """
import atexit, sys
atexit.register(lambda: print(len(sys.modules), file=sys.stderr))
from toolwire_client.cli import main
main({args!r}, prog_name="toolwire")
"""


@pytest.mark.parametrize(
    "args",
    [["--help"], ["--version"], ["-h"], *([*name.split(), "--help"] for name in sorted(json.loads(PAGES.read_text())))],
)
def test_help_and_version_import_few_modules(args: list[str], tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", COUNT.format(args=args)], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    count = int(done.stderr.strip().splitlines()[-1])
    assert count <= MAX_MODULES, f"toolwire {' '.join(args)} imported {count} modules"
    assert "toolwire" in done.stdout


def test_every_stored_help_page_is_what_click_prints() -> None:
    """`toolwire COMMAND --help` prints a page written ahead (help_pages.json): it must be the command's own, for
    every command (`make readme` writes them again)."""
    stored = json.loads(PAGES.read_text())
    fresh = "import json; from toolwire_client.cli import main; from toolwire_client.cli.help_pages import render; "
    fresh += "print(json.dumps(render(main)))"  # in a fresh process: tests here register scripted models `run` lists
    done = subprocess.run([sys.executable, "-c", fresh], capture_output=True, text=True, timeout=120, check=True)
    assert stored == json.loads(done.stdout), "a --help page is stale: `make readme` writes them again"
    assert set(stored) >= set(COMMANDS)


def test_a_stored_page_is_printed_only_for_a_command_then_help(tmp_path: Path) -> None:
    assert stored_page(["run", "--help"]) == json.loads(PAGES.read_text())["run"]
    assert stored_page(["trace", "show", "-h"]) is not None
    for args in (["run", "x", "--help"], ["--db", "x", "run", "--help"], ["run"], ["nosuch", "--help"]):
        assert stored_page(args) is None, args
    narrow = run_toolwire("run", "--help", env={**os.environ, "COLUMNS": "60"}, cwd=tmp_path)
    assert narrow.returncode == 0 and narrow.stdout.startswith("Usage: toolwire run [OPTIONS] TASK"), narrow.stderr
    assert narrow.stdout != json.loads(PAGES.read_text())["run"]  # narrower than a stored page: click's own, wrapped


def test_the_command_list_shows_each_commands_own_summary() -> None:
    assert set(SUMMARIES) == set(COMMANDS), "cli/summaries.py has a line for each command of COMMANDS"
    ctx = click.Context(main)
    for name in COMMANDS:
        command = main.get_command(ctx, name)
        assert command is not None
        own = command.get_short_help_str(limit=1000)
        listed = click.Command(name, help=SUMMARIES[name]).get_short_help_str(limit=1000)
        assert listed == own, f"{name}: cli/summaries.py says {listed!r}, its help starts {own!r}"


def test_help_lists_every_command() -> None:
    listed = main.get_help(click.Context(main, info_name="toolwire"))
    for name in COMMANDS:
        assert f"\n  {name} " in listed
