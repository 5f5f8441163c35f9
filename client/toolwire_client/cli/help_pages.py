"""Each command's `--help` page, written ahead (help_pages.json) so `toolwire COMMAND --help` answers without
importing the command: its module loads the run loop, the MCP client or the store's drivers (0.4-0.9 s of CPU).

`make readme` rewrites the file from the click command tree (`write_pages`, with the README's tables), and
tests/test_cli_start.py checks that every page is exactly what click prints, so a page cannot go stale. A page is
used only where click would print it at its full width (a terminal of 80 columns or more, or no terminal)."""

import json
import shutil
from pathlib import Path

import click

PAGES = Path(__file__).with_name("help_pages.json")
WIDTH = 80
"""click's widest help (its `max_width`): at this width and wider a page looks the same on every terminal."""
_rendering: list[bool] = []


def stored_page(args: list[str]) -> str | None:
    """The page for `toolwire ARGS` when ARGS are a command's path then `--help` (or `-h`) and nothing else."""
    if _rendering or len(args) < 2 or args[-1] not in ("--help", "-h") or any(a.startswith("-") for a in args[:-1]):
        return None
    if shutil.get_terminal_size((WIDTH, 24)).columns < WIDTH:
        return None
    try:
        pages: dict[str, str] = json.loads(PAGES.read_text(encoding="utf-8"))
    except OSError:
        return None
    return pages.get(" ".join(args[:-1]))


def render(group: click.Group) -> dict[str, str]:
    """Every command's page as click prints it, by its path under `toolwire` (`run`, `trace show`)."""
    from click.testing import CliRunner

    from toolwire_client.cli.reference import commands

    runner = CliRunner()
    pages = {}
    _rendering.append(True)
    try:
        for path, _command in commands(group):
            words = path.split()[1:]
            for depth in range(1, len(words) + 1):  # a group's own page too (`trace`)
                key = " ".join(words[:depth])
                if key not in pages:
                    done = runner.invoke(
                        group, [*words[:depth], "--help"], prog_name="toolwire", env={"COLUMNS": "200"}
                    )
                    pages[key] = done.output
    finally:
        _rendering.clear()
    return pages


def write_pages(group: click.Group) -> None:
    PAGES.write_text(json.dumps(render(group), indent=1, sort_keys=True) + "\n", encoding="utf-8")
