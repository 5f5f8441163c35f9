"""Who may call a command that listens (the console, `agent serve --a2a|--ag-ui`): the tokens file's (or
$TOOLWIRE_TOKENS's) callers, read before the port is bound, and a host other machines reach refused without them."""

import ipaddress
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

Callers = TypeVar("Callers")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_callers(
    tokens_file: str | None, host: str, callers: Callable[[Mapping[str, Any], str], Callers], advice: str
) -> Callers | None:
    """`callers` of the tokens file (None when there is none); a bad file or an open host with none is one line,
    whose `advice` names what the host reaches and what to give, e.g. "the agent: give --tokens FILE"."""
    from toolwire_shared.tokens import AccessConfigError, config_from_env, read_config

    try:
        found = read_config(tokens_file) if tokens_file else config_from_env()
        granted = callers(*found) if found is not None else None
    except (AccessConfigError, OSError) as exc:
        raise click.UsageError(str(exc)) from exc
    if granted is None and not is_loopback(host):
        raise click.UsageError(f"--host {host} lets other machines reach {advice}, or bind 127.0.0.1")
    return granted
