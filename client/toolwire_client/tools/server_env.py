"""The environment a stdio tool server starts with: a documented minimal base, plus exactly what its spec passes.

A tool server is code toolwire does not vouch for, so it never inherits toolwire's own secrets (the run store's
URL with its password in TOOLWIRE_DB, the tool server's tokens in TOOLWIRE_TOKENS, OTLP auth headers) nor a
provider key: only what a process needs to start and to trace into the same place, and what its spec names
(`env` values, `pass_env` names read here, `--server-env NAME[=VALUE]` on the command line)."""

import os
from collections.abc import Mapping

from toolwire_client.tools.server_stderr import NOTE

BASE = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")
"""What any program expects to find (the MCP SDK passes the first six itself)."""
PYTHON = ("PYTHONPATH", "VIRTUAL_ENV")
"""So a Python tool server started from a venv imports what its command names."""
TOOLWIRE_SETTINGS = ("TOOLWIRE_DEBUG", "TOOLWIRE_NO_FAST_PATH")
"""The toolwire settings a tool server itself reads; none of them holds a secret."""


def base_environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The minimal base taken from `env` (default this process's): BASE, PYTHON, TOOLWIRE_SETTINGS and the OTEL_*
    settings but their credentials (toolwire_otel.setup.child_process_env), and this process's `--trace FILE`."""
    from toolwire_otel.setup import child_process_env

    env = os.environ if env is None else env
    kept = {k: v for k, v in env.items() if k in BASE or k in PYTHON or k in TOOLWIRE_SETTINGS}
    return kept | child_process_env(None if env is os.environ else env)


def server_environment(
    values: Mapping[str, str], passed: list[str], env: Mapping[str, str] | None = None
) -> tuple[dict[str, str], list[str]]:
    """The whole environment of one server: the base, then each name in `passed` read from `env`, then `values`;
    and the names in `passed` that are not set here (reported, so a missing key is not a mystery)."""
    env = os.environ if env is None else env
    given = base_environment(env)
    missing = [name for name in passed if name not in env]
    given |= {name: env[name] for name in passed if name in env}
    return given | dict(values), missing


def described(environment: Mapping[str, str], missing: list[str]) -> str:
    """One line for the server's log (and `-v`): the names it was given, never their values."""
    line = NOTE + "started with environment variables " + ", ".join(sorted(environment))
    if missing:
        line += "; not set here, so not passed: " + ", ".join(missing)
    return line
