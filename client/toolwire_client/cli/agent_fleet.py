"""`agent serve --fleet`: the door's runs driven by the worker fleet. The served agent's tool servers are then
names of the workers' servers file (`--fleet-server NAME`, as `toolwire submit --server NAME`): a worker starts
only the servers it was configured with, so the door (and whoever calls it) can never name a command, a URL, an
environment or a base URL for the workers to use (docs/fleet.md, docs/security.md)."""

from collections.abc import Callable
from typing import Any, TypeVar

import click

from toolwire_client.cli import servers
from toolwire_client.cli.run_config import config_from
from toolwire_client.config import RunConfig

F = TypeVar("F", bound=Callable[..., Any])

LOCAL_ONLY = {
    "commands": "--server",
    "urls": "--server-url",
    "base_url": "--base-url",
    "a2a_agents": "--a2a-agent",
    "token_env": "--token-env",
    "server_env": "--server-env",
}
"""Options that would have the workers start, reach or pass what this door names: refused with --fleet."""


def fleet_options(fn: F) -> F:
    said = "With --fleet: a tool server of the workers' servers file, by name (repeatable)."
    fn = servers.name_option("--fleet-server", "fleet_servers", said)(fn)
    return click.option(
        "--fleet",
        is_flag=True,
        help="Drive the runs on the worker fleet (`toolwire worker` on the same --db): the door submits each new "
        "task, and a decision wakes the fleet.",
    )(fn)


def fleet_config(fleet_servers: list[str], options: dict[str, Any]) -> RunConfig:
    """The served agent's config for the fleet: its servers the workers' by name; a local-only option is one line."""
    for key, flag in LOCAL_ONLY.items():
        if options.get(key) and options[key] != ({}, []):
            raise click.UsageError(
                f"{flag} names something for this process to start or reach; with --fleet the workers start only "
                "their servers file's servers: name them with --fleet-server NAME"
            )
    return config_from(**options, server_names=list(fleet_servers))


def no_fleet_servers(fleet_servers: list[str]) -> None:
    if fleet_servers:
        raise click.UsageError("--fleet-server names a worker's server: add --fleet (or name --server CMD)")
