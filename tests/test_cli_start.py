"""`toolwire --help` and `--version` start without importing the sub-commands, the run store's drivers or the MCP
SDK: a module count (not a time) in a fresh process, and the command list's summaries are each command's own."""

import subprocess
import sys
from pathlib import Path

import click
import pytest

from toolwire_client.cli import COMMANDS, main
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


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["-h"], ["serve", "--help"], ["dev", "--help"]])
def test_help_and_version_import_few_modules(args: list[str], tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", COUNT.format(args=args)], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    count = int(done.stderr.strip().splitlines()[-1])
    assert count <= MAX_MODULES, f"toolwire {' '.join(args)} imported {count} modules"
    assert "toolwire" in done.stdout


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
