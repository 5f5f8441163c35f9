"""`toolwire agent serve --a2a`: one agent (the config a `toolwire run` takes: model, servers, limits, risky tools)
served over A2A, each task a run in the run store (toolwire_client.a2a; docs/a2a.md). Bound to 127.0.0.1 by default;
bound to any other address it needs the tokens file, whose agents are the callers, by bearer token or by OAuth access
token (its [oauth] table, as `toolwire serve`)."""

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from toolwire_client.cli._callers import read_callers
from toolwire_client.cli._store import store_name

if TYPE_CHECKING:
    from toolwire_client.a2a.app import Served
    from toolwire_client.config import RunConfig
    from toolwire_shared.oauth.callers import Callers


def serve_a2a(
    config: "RunConfig",
    db: str | None,
    host: str,
    port: int,
    tokens_file: str | None,
    description: str | None,
    public_url: str | None,
    servers_file: str | None,
    fleet: bool = False,
) -> None:
    """`agent serve --a2a`: message/send and message/stream start or continue a task, tasks/get, tasks/cancel."""
    from dataclasses import replace

    from toolwire_client.a2a.app import build_app
    from toolwire_client.cli.door_serve import serve_door

    served = served_from(config, db, host, port, tokens_file, description, public_url, servers_file)
    served = replace(served, fleet=fleet)
    login = f"{served.callers.login()} (agents)" if served.callers else "no login (this machine only)"
    driven = " (driven by the worker fleet)" if fleet else ""
    where = f"A2A at {served.url} ; runs of {store_name(db)}{driven}"
    click.echo(f"toolwire agent {config.name}: {where}; {login}", err=True)
    door = f"toolwire agent serve --a2a{' --fleet' if fleet else ''} at {served.url}"
    serve_door(build_app(served), host, port, db, fleet, door, timeout_graceful_shutdown=2)


def served_from(
    config: "RunConfig",
    db: str | None,
    host: str,
    port: int,
    tokens_file: str | None,
    description: str | None = None,
    public_url: str | None = None,
    servers_file: str | None = None,
) -> "Served":
    """What the A2A door serves, from the command's options (usage errors as one line): the tokens file's agents
    by bearer token and OAuth subject (required off loopback), a bindable port, the card's URL and description.
    Any command that serves the agent over A2A (this one, or `agent serve` with the other protocols) builds it
    here."""
    from toolwire_client.a2a.app import Served
    from toolwire_client.assembly.trusted_servers import resume_trust
    from toolwire_server.transports.http import PortInUse, check_bindable

    callers = read_callers(
        tokens_file,
        host,
        agent_callers,
        "the agent, so it needs callers' tokens: give --tokens FILE (the tool server's tokens file)",
    )
    try:
        check_bindable(host, port)
    except PortInUse as exc:
        raise click.ClickException(str(exc)) from exc
    shown = f"[{host}]" if ":" in host else host
    return Served(
        config=config,
        db=db,
        url=public_url or f"http://{shown}:{port}/",
        callers=callers,
        trust=resume_trust(servers_file),
        description=description or config.system or f"The toolwire agent {config.name}.",
        host=host,
        port=port,
    )


def agent_callers(data: Mapping[str, Any], origin: str) -> "Callers[str]":
    """The tokens file's agents as callers: by bearer token (an OAuth-only agent has none), and with an [oauth]
    table by `subject`, the agent_claim of its access tokens (as the tool server reads the same file)."""
    from toolwire_shared.oauth.callers import Callers, oauth_of
    from toolwire_shared.tokens import AccessConfigError, agent_entries, agent_token

    tokens: dict[str, str] = {}
    subjects: dict[str, str] = {}
    for agent, entry in agent_entries(data, origin).items():
        token, subject = agent_token(agent, entry, origin), entry.get("subject")
        if token is not None:
            tokens[str(token)] = agent
        if subject is not None:
            if not isinstance(subject, str) or not subject or subject in subjects:
                raise AccessConfigError(f"{origin}: agents.{agent}.subject must be a non-empty string of its own")
            subjects[subject] = agent
    return Callers(tokens, oauth_of(data, origin, subjects), subjects)
