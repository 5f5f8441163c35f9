"""`--json` means "print JSON" on every command. Two commands once took a value after it (`answer --json '{...}'`,
`eval --json FILE`); for one release that spelling still works, with a one-line note naming the new option."""

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

PRINT = "\x00print"
"""What a bare `--json` gives where the option still takes the old value (no value can be this)."""


def json_option(help_text: str, *, old_value: str | None = None) -> Callable[[F], F]:
    """`--json`, a flag; with `old_value`, a bare `--json` prints JSON and `--json VALUE` is the old spelling of
    `old_value VALUE` (read it with `printing_json`)."""
    if old_value is None:
        return click.option("--json", "as_json", is_flag=True, help=help_text)
    return click.option("--json", "as_json", is_flag=False, flag_value=PRINT, default=None, metavar="", help=help_text)


def printing_json(as_json: str | None, new_option: str) -> tuple[bool, str | None]:
    """(print JSON?, the value given in the old spelling, with its note on stderr, or None)."""
    if as_json is None:
        return False, None
    if as_json == PRINT:
        return True, None
    click.echo(
        f"note: `--json VALUE` is now `{new_option} VALUE` (`--json` alone prints JSON); "
        "the old spelling goes in the next release",
        err=True,
    )
    return False, as_json
