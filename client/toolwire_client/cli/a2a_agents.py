"""`toolwire run --a2a-agent [NAME=]URL`: remote A2A agents a run calls as tools (one `ask_NAME` tool each,
tools/a2a_source.py), checked as the command line is read."""

import re
from typing import Any
from urllib.parse import urlsplit

import click

from toolwire_client.config import A2AAgentSpec

NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,40}")

A2A_OPTIONS: list[Any] = [
    click.option(
        "--a2a-agent",
        "a2a_agents",
        multiple=True,
        metavar="[NAME=]URL",
        help="A remote A2A agent (its Agent Card at URL/.well-known/agent-card.json) offered as the tool ask_NAME; "
        "each call is one A2A task, followed to its end (repeatable).",
    ),
    click.option(
        "--a2a-token-env",
        metavar="VAR",
        help="The environment variable holding the bearer token the A2A agents want (its name is saved, never it).",
    ),
]


def a2a_specs(values: tuple[str, ...], token_env: str | None) -> list[A2AAgentSpec]:
    specs: list[A2AAgentSpec] = []
    for i, value in enumerate(values):
        name, equals, url = value.partition("=")
        if not equals or "://" in name:
            name, url = f"agent{i + 1}" if len(values) > 1 else "agent", value
        parts = urlsplit(url)
        if not NAME.fullmatch(name) or parts.scheme not in ("http", "https") or not parts.hostname:
            raise click.BadParameter(
                f"{value!r}: give an http(s) URL, or NAME=URL with a NAME of letters, digits, _ and - "
                "(e.g. --a2a-agent billing=http://127.0.0.1:8410/)",
                param_hint="--a2a-agent",
            )
        specs.append(A2AAgentSpec(url=url, name=name, token_env=token_env))
    if len({spec.name for spec in specs}) != len(specs):
        raise click.BadParameter("two A2A agents share a name: name each, NAME=URL", param_hint="--a2a-agent")
    return specs
