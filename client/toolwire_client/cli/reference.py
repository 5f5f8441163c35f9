"""The README's table of every `toolwire` command and option, made from the click command tree, and its table of
exit statuses, made from mistakes.EXIT_CODES.

`python -m toolwire_client.cli.reference README.md` rewrites both tables between their markers (and each command's
stored `--help` page, help_pages.py); tests/test_readme.py
and tests/test_rough_edges.py check that the README holds exactly what this makes, so a new command, option or exit
status cannot be left out."""

import sys
from collections.abc import Iterator
from pathlib import Path

import click

BEGIN = "<!-- the command table: `make readme` writes it, the tests check it -->"
END = "<!-- end of the command table -->"
EXIT_BEGIN = "<!-- the exit statuses: `make readme` writes them, the tests check them -->"
EXIT_END = "<!-- end of the exit statuses -->"


def commands(group: click.Group, path: str = "toolwire") -> Iterator[tuple[str, click.Command]]:
    """Every command under `group`, depth first, with its full path (`toolwire trace show`)."""
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None
        if isinstance(command, click.Group):
            yield from commands(command, f"{path} {name}")
        else:
            yield f"{path} {name}", command


def _value(option: click.Option) -> str:
    if option.is_flag or option.metavar == "":  # metavar "": a flag that still takes an old spelling's value (_json.py)
        return ""
    if option.metavar:
        return f" {option.metavar}"
    kind = option.type
    if isinstance(kind, click.Choice):
        return " " + "|".join(map(str, kind.choices))
    if isinstance(kind, click.IntRange | click.FloatRange) or kind in (click.INT, click.FLOAT):
        return " N"
    if isinstance(kind, click.Path | click.File):
        return " FILE"
    longest = max(option.opts, key=len)
    return " " + longest.lstrip("-").rsplit("-", 1)[-1].upper()


def option_text(option: click.Option) -> str:
    names = "/".join(sorted(option.opts, key=len))
    repeat = " (repeatable)" if option.multiple else ""
    return f"`{names}{_value(option)}`{repeat}"


def _arguments(command: click.Command) -> str:
    parts = []
    for param in command.params:
        if isinstance(param, click.Argument):
            name = (param.metavar or param.name or "ARG").upper()
            parts.append(name if param.required or name.startswith("[") else f"[{name}]")
    return " ".join(parts)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def table(group: click.Group) -> str:
    own = ", ".join(option_text(p) for p in group.params if isinstance(p, click.Option))
    rows = [
        "| command | options | what it does |",
        "|---|---|---|",
        f"| `toolwire` | {_cell(own)}, `-h/--help` (on every command) | {_cell(group.get_short_help_str(limit=200))} |",
    ]
    for path, command in commands(group):
        usage = f"{path} {_arguments(command)}".strip()
        options = ", ".join(option_text(p) for p in command.params if isinstance(p, click.Option) and not p.hidden)
        what = command.get_short_help_str(limit=200)
        rows.append(f"| `{_cell(usage)}` | {_cell(options)} | {_cell(what)} |")
    return "\n".join(rows)


def section(group: click.Group) -> str:
    return f"{BEGIN}\n{table(group)}\n{END}"


def exit_table() -> str:
    from toolwire_client.mistakes import EXIT_CODES

    return "\n".join(["| exit | means |", "|---|---|", *(f"| {code} | {_cell(means)} |" for code, means in EXIT_CODES)])


def rewrite(readme: Path, group: click.Group) -> None:
    text = readme.read_text(encoding="utf-8")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    text = text[:start] + section(group) + text[end:]
    start, end = text.index(EXIT_BEGIN), text.index(EXIT_END) + len(EXIT_END)
    readme.write_text(text[:start] + f"{EXIT_BEGIN}\n{exit_table()}\n{EXIT_END}" + text[end:], encoding="utf-8")


if __name__ == "__main__":
    from toolwire_client.cli import main
    from toolwire_client.cli.help_pages import write_pages

    rewrite(Path(sys.argv[1] if len(sys.argv) > 1 else "README.md"), main)
    write_pages(main)  # and each command's --help page, which `toolwire COMMAND --help` prints without importing it
