"""`toolwire agent serve --a2a`: one agent (the config a `toolwire run` takes: model, servers, limits, risky tools)
served over A2A, each task a run in the run store (toolwire_client.a2a; docs/a2a.md). Bound to 127.0.0.1 by default;
bound to any other address it needs the tokens file, whose agents' bearer tokens are the callers' (as `toolwire
serve`)."""

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from toolwire_client.cli._callers import read_callers
from toolwire_client.cli._store import store_name

if TYPE_CHECKING:
    from toolwire_client.a2a.app import Served
    from toolwire_client.config import RunConfig


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

    import uvicorn

    from toolwire_client.a2a.app import build_app

    served = served_from(config, db, host, port, tokens_file, description, public_url, servers_file)
    served = replace(served, fleet=fleet)
    login = f"bearer tokens of {len(served.tokens)} agent(s)" if served.tokens else "no login (this machine only)"
    driven = " (driven by the worker fleet)" if fleet else ""
    where = f"A2A at {served.url} ; runs of {store_name(db)}{driven}"
    click.echo(f"toolwire agent {config.name}: {where}; {login}", err=True)
    uvicorn_config = uvicorn.Config(
        build_app(served), host=host, port=port, log_level="warning", timeout_graceful_shutdown=2, lifespan="on"
    )
    uvicorn.Server(uvicorn_config).run()


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
    """What the A2A door serves, from the command's options (usage errors as one line): the tokens file's agents'
    bearer tokens (required off loopback), a bindable port, the card's URL and description. Any command that serves
    the agent over A2A (this one, or `agent serve` with the other protocols) builds it here."""
    from toolwire_client.a2a.app import Served
    from toolwire_client.assembly.trusted_servers import resume_trust
    from toolwire_server.transports.http import PortInUse, check_bindable

    tokens = read_callers(
        tokens_file,
        host,
        _agent_tokens,
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
        tokens=tokens,
        trust=resume_trust(servers_file),
        description=description or config.system or f"The toolwire agent {config.name}.",
        host=host,
        port=port,
    )


def _agent_tokens(data: Mapping[str, Any], origin: str) -> dict[str, str]:
    """bearer token -> agent, for every agent of the tokens file that has one (an OAuth-only agent has none here)."""
    from toolwire_shared.tokens import agent_entries, agent_token

    tokens = {str(agent_token(agent, entry, origin)): agent for agent, entry in agent_entries(data, origin).items()}
    tokens.pop("None", None)
    return tokens
