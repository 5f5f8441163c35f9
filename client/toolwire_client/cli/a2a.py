"""`toolwire a2a serve`: one agent (the config a `toolwire run` takes: model, servers, limits, risky tools) served
over A2A, each task a run in the run store (toolwire_client.a2a; docs/a2a.md). Bound to 127.0.0.1 by default; bound
to any other address it needs the tokens file, whose agents' bearer tokens are the callers' (as `toolwire serve`)."""

from typing import TYPE_CHECKING, Any

import click

from toolwire_client.cli._store import db_option, store_name
from toolwire_client.cli.run import config_from, config_options
from toolwire_client.cli.servers import servers_file_option
from toolwire_client.cli.ui import is_loopback

if TYPE_CHECKING:
    from toolwire_client.a2a.app import Served
    from toolwire_client.config import RunConfig


@click.group("a2a")
def a2a() -> None:
    """Serve an agent over A2A (Agent2Agent): each A2A task is a saved, resumable toolwire run."""


@a2a.command("serve")
@config_options
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind; not loopback needs --tokens.")
@click.option("--port", default=8410, show_default=True, type=click.IntRange(0, 65535), help="Port to bind.")
@click.option(
    "--tokens",
    "tokens_file",
    metavar="FILE",
    help="The tool server's tokens file (TOML/JSON; $TOOLWIRE_TOKENS too): each request needs one of its agents' "
    "bearer tokens, and a caller sees only the tasks it started.",
)
@click.option("--name", default="agent", show_default=True, help="The agent's name (its Agent Card, its runs).")
@click.option("--description", default=None, help="What the agent does, for its Agent Card.")
@click.option("--public-url", metavar="URL", help="Where clients reach it, for the card (default http://HOST:PORT/).")
@servers_file_option("Tool servers a task resumed here may start, by the names it saved (as `toolwire resume`).")
def serve(
    db: str | None,
    host: str,
    port: int,
    tokens_file: str | None,
    name: str,
    description: str | None,
    public_url: str | None,
    servers_file: str | None,
    **options: Any,
) -> None:
    """Serve the agent over A2A: message/send and message/stream start or continue a task, tasks/get, tasks/cancel."""
    import uvicorn

    from toolwire_client.a2a.app import build_app

    config = config_from(**options).model_copy(update={"name": name})
    served = served_from(config, db, host, port, tokens_file, description, public_url, servers_file)
    login = f"bearer tokens of {len(served.tokens)} agent(s)" if served.tokens else "no login (this machine only)"
    click.echo(f"toolwire a2a: {served.url} ; runs of {store_name(db)}; {login}; Ctrl-C stops it", err=True)
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
    from toolwire_shared.tokens import AccessConfigError, agent_entries, agent_token, config_from_env, read_config

    try:
        found = read_config(tokens_file) if tokens_file else config_from_env()
        tokens = None
        if found is not None:
            entries = agent_entries(*found)
            tokens = {str(agent_token(agent, entry, found[1])): agent for agent, entry in entries.items()}
            tokens.pop("None", None)  # an OAuth-only agent has no bearer token here
    except (AccessConfigError, OSError) as exc:
        raise click.UsageError(str(exc)) from exc
    if tokens is None and not is_loopback(host):
        raise click.UsageError(
            f"--host {host} lets other machines reach the agent, so it needs callers' tokens: give --tokens FILE "
            "(the tool server's tokens file), or bind 127.0.0.1"
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
