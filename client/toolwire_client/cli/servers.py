"""The tool servers a `toolwire run` names: --server commands and --server-url URLs, checked as the command line is
read (a program that is not on PATH, a URL that is not http(s)), and named after what they serve."""

import os
import re
import shlex
import shutil
import sys
from pathlib import Path
from urllib.parse import urlsplit

import click

from toolwire_client.config import ServerSpec


def commands(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[list[str]]:
    """--server values as argv lists; a program that cannot be found is a usage error."""
    argvs = []
    for value in values:
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
        argvs.append(argv)
    return argvs


def this_toolwire() -> list[str]:
    """The command that runs this very toolwire."""
    beside = Path(sys.executable).with_name("toolwire")
    return [str(beside)] if beside.is_file() else [sys.executable, "-m", "toolwire_client.cli"]


def urls(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[str]:
    for value in values:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise click.BadParameter(
                f"{value!r} is not an http:// or https:// URL (e.g. http://127.0.0.1:8000/mcp)", ctx, param
            )
    return list(values)


def token_variable(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not os.environ.get(value):
        raise click.BadParameter(f"the environment variable {value} is not set (it should hold the token)", ctx, param)
    return value


def server_specs(argvs: list[list[str]], urls: list[str], token_env: str | None) -> list[ServerSpec]:
    """One ServerSpec per server, each named after what it serves (the log's prefix and, for tools two servers
    share, the tool names' prefix)."""
    names: list[str] = []

    def unique(name: str) -> str:
        taken = names.count(name)
        names.append(name)
        return name if not taken else f"{name}-{taken + 1}"

    specs = [ServerSpec(name=unique(_safe(_command_name(argv))), command=argv) for argv in argvs]
    specs += [ServerSpec(name=unique("http"), url=url, token_env=token_env) for url in urls]
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
