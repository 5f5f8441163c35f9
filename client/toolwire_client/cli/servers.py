"""The tool servers a `toolwire run` (or `tools`, `call`) names: --server commands and --server-url URLs, checked as
the command line is read (a program that is not on PATH, a URL that is not http(s)), and named after what they
serve. The one owner of the options that name them (CONNECTION_OPTIONS)."""

import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import click

from toolwire_client.config import ServerSpec

F = TypeVar("F", bound=Callable[..., Any])


NAMED = re.compile(r"([A-Za-z][A-Za-z0-9_-]{0,63})=(\S.*)", re.DOTALL)
"""`--server NAME=CMD`, `--server-url NAME=URL`: a name the run's other options (`--trust`, `--allow-sampling`) and
its logs use. A command never starts with `WORD=` (that is no program), nor a URL (its scheme has a colon)."""


@dataclass(frozen=True, slots=True)
class NamedCommand:
    """A --server command the user named."""

    name: str
    argv: list[str]


@dataclass(frozen=True, slots=True)
class NamedUrl:
    """A --server-url the user named."""

    name: str
    url: str


Command = list[str] | NamedCommand
Url = str | NamedUrl


def split_name(value: str) -> tuple[str | None, str]:
    """`NAME=REST` -> (NAME, REST); anything else -> (None, value)."""
    match = NAMED.fullmatch(value.strip())
    return (match[1], match[2]) if match else (None, value)


def commands(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[Command]:
    """--server values as argv lists (named ones as Named); a program that cannot be found is a usage error."""
    argvs: list[Command] = []
    for given in values:
        name, value = split_name(given)
        try:
            argv = shlex.split(value)
        except ValueError as exc:
            raise click.BadParameter(f"{value!r}: {exc}", ctx, param) from exc
        if not argv:
            raise click.BadParameter("an empty command", ctx, param)
        if argv[0] == "toolwire" and shutil.which("toolwire") is None:
            argv = [*this_toolwire(), *argv[1:]]  # the venv's entry point, when the venv is not on PATH
        if shutil.which(argv[0]) is None:
            where = "is not an executable file" if os.sep in argv[0] else "is not on PATH"
            raise click.BadParameter(f"{value!r}: the program '{argv[0]}' {where}", ctx, param)
        argvs.append(NamedCommand(name, argv) if name else argv)
    return argvs


def name_option(flag: str, dest: str, said: str) -> Callable[[F], F]:
    """A repeatable option that names servers of the workers' servers file (`submit --server`, `--fleet-server`)."""
    return click.option(flag, dest, multiple=True, metavar="NAME", callback=names, help=said)


def names(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[str]:
    """`submit --server NAME` values: names of the workers' servers file, never a command or a URL."""
    for value in values:
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", value):
            raise click.BadParameter(
                f"{value!r}: a submitted run names a server of the workers' servers file (e.g. --server support), "
                "never a command or a URL: a worker starts only the servers it was configured with",
                ctx,
                param,
            )
    return list(values)


def this_toolwire() -> list[str]:
    """The command that runs this very toolwire."""
    beside = Path(sys.executable).with_name("toolwire")
    return [str(beside)] if beside.is_file() else [sys.executable, "-m", "toolwire_client.cli"]


def urls(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[Url]:
    checked: list[Url] = []
    for given in values:
        name, value = split_name(given)
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise click.BadParameter(
                f"{value!r} is not an http:// or https:// URL (e.g. http://127.0.0.1:8000/mcp, or NAME=URL)", ctx, param
            )
        checked.append(NamedUrl(name, value) if name else value)
    return checked


def token_variable(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not os.environ.get(value):
        raise click.BadParameter(f"the environment variable {value} is not set (it should hold the token)", ctx, param)
    return value


def servers_file_option(help_text: str) -> Callable[[F], F]:
    """`--servers FILE`: a TOML servers file ([servers.NAME] tables; trusted_servers.py), read when it is used."""
    return click.option(
        "--servers",
        "servers_file",
        metavar="FILE",
        type=click.Path(exists=True, dir_okay=False),
        help=help_text,
    )


def server_env(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[dict[str, str], list[str]]:
    """--server-env NAME=VALUE (a value, saved with the run) or NAME (passed from this environment, never saved)."""
    values_given: dict[str, str] = {}
    names: list[str] = []
    for value in values:
        name, equals, given = value.partition("=")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise click.BadParameter(f"{value!r}: give NAME or NAME=VALUE (e.g. --server-env API_KEY)", ctx, param)
        if equals:
            values_given[name] = given
        else:
            names.append(name)
    return values_given, names


def server_specs(
    argvs: Sequence[Command],
    urls: Sequence[Url],
    token_env: str | None,
    env: tuple[dict[str, str], list[str]] = ({}, []),
) -> list[ServerSpec]:
    """One ServerSpec per server, named as the user named it (`NAME=CMD`) or else after what it serves (the log's
    prefix and, for tools two servers share, the tool names' prefix). A command runs in the folder it was typed in
    (its `cwd`, saved with the run), so `resume` or a worker started elsewhere finds the files it names."""
    chosen = [item.name for item in [*argvs, *urls] if isinstance(item, NamedCommand | NamedUrl)]
    twice = sorted({name for name in chosen if chosen.count(name) > 1})
    if twice:
        raise click.UsageError(f"two tool servers are named {twice[0]}; give each --server NAME=CMD its own name")
    names: list[str] = list(chosen)

    def unique(name: str) -> str:
        taken = names.count(name)
        names.append(name)
        return name if not taken else f"{name}-{taken + 1}"

    values, passed = env
    here = os.getcwd()
    specs = []
    for item in argvs:
        argv = item.argv if isinstance(item, NamedCommand) else item
        name = item.name if isinstance(item, NamedCommand) else unique(_safe(_command_name(argv)))
        specs.append(ServerSpec(name=name, command=argv, env=values, pass_env=passed, cwd=here))
    for url_item in urls:
        url = url_item.url if isinstance(url_item, NamedUrl) else url_item
        name = url_item.name if isinstance(url_item, NamedUrl) else unique("http")
        specs.append(ServerSpec(name=name, url=url, token_env=token_env))
    return specs


def _safe(name: str) -> str:
    """A name that can prefix a tool name (providers accept letters, digits, _ and -)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_") or "server"


def _command_name(argv: list[str]) -> str:
    """The module or file of a MODULE:ATTR argument (`toolwire serve tools:registry` -> tools), else the program."""
    for arg in argv[1:]:
        module, colon, attr = arg.partition(":")
        if colon and module and attr and not arg.startswith("-") and "//" not in arg:
            return Path(module).stem.rsplit(".", 1)[-1] if module.endswith(".py") else module.rsplit(".", 1)[-1]
    return Path(argv[0]).name


CONNECTION_OPTIONS: list[Callable[[Any], Any]] = [
    click.option(
        "--server",
        "commands",
        multiple=True,
        metavar="[NAME=]CMD",
        callback=commands,
        help="A stdio tool server command (e.g. 'toolwire serve examples.support_tools:registry --stdio'; "
        "`toolwire` there is this toolwire, on PATH or not); NAME= names it for --trust and --allow-sampling "
        "(else it is named after its program or module).",
    ),
    click.option(
        "--server-url",
        "urls",
        multiple=True,
        metavar="[NAME=]URL",
        callback=urls,
        help="A Streamable HTTP tool server (toolwire serve --http answers at http://HOST:PORT/mcp).",
    ),
    click.option(
        "--token-env",
        metavar="VAR",
        callback=token_variable,
        help="Environment variable holding the bearer token for --server-url.",
    ),
    click.option(
        "--server-env",
        "server_env",
        multiple=True,
        metavar="NAME[=VALUE]",
        callback=server_env,
        help="Pass NAME to every --server from this environment (never saved), or set NAME=VALUE (saved with the "
        "run); a server gets only a minimal environment otherwise (docs/security.md).",
    ),
]
"""How to reach the tool servers (`--server`, `--server-url`, `--token-env`, `--server-env`): `run`'s, and `tools` and
`call`'s, which talk to the servers with no model."""
