"""`toolwire agent serve`: one configured agent (the options of `toolwire run`) served to other programs over an
agent protocol: AG-UI (`--ag-ui`, toolwire_client.agui) for front ends. Bound to 127.0.0.1 by default; bound to any
other address it requires a tokens file with people in it, as `toolwire ui` does."""

from typing import Any

import click

from toolwire_client.cli._store import db_option, store_name
from toolwire_client.cli.run import config_from, config_options
from toolwire_client.cli.ui import is_loopback


@click.group("agent")
def agent() -> None:
    """Serve a configured agent to other programs: AG-UI front ends (`agent serve --ag-ui`)."""


@agent.command("serve")
@click.option("--ag-ui", "ag_ui", is_flag=True, help="Serve AG-UI at /ag-ui: a front end's run, streamed as events.")
@click.option("--name", default="agent", show_default=True, help="The agent's name (the runs' agent, for --tokens).")
@config_options
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind; not loopback needs --tokens.")
@click.option("--port", default=8500, show_default=True, type=click.IntRange(0, 65535), help="Port to bind.")
@click.option(
    "--tokens",
    "tokens_file",
    metavar="FILE",
    help="Require `Authorization: Bearer TOKEN` of a person of this file's [people.NAME] tables (as `toolwire ui "
    "--tokens`; $TOOLWIRE_TOKENS too): each runs, follows and decides only the runs of their agents.",
)
def serve(
    ag_ui: bool, name: str, db: str | None, host: str, port: int, tokens_file: str | None, **options: Any
) -> None:
    """Serve the agent the options describe over an agent protocol, until stopped (Ctrl-C)."""
    import uvicorn

    from toolwire_client.ui.people import people_tokens
    from toolwire_shared.tokens import AccessConfigError, config_from_env, read_config

    if not ag_ui:
        raise click.UsageError("name the protocol to serve: --ag-ui")
    config = config_from(**options).model_copy(update={"name": name})
    try:
        found = read_config(tokens_file) if tokens_file else config_from_env()
        people = people_tokens(*found) if found is not None else None
    except (AccessConfigError, OSError) as exc:
        raise click.UsageError(str(exc)) from exc
    if people is None and not is_loopback(host):
        raise click.UsageError(
            f"--host {host} lets other machines reach the agent: give --tokens FILE, or bind 127.0.0.1"
        )
    from toolwire_client.agui.app import PATH, AgUiSettings, build_app
    from toolwire_server.transports.http import PortInUse, check_bindable

    try:
        check_bindable(host, port)
    except PortInUse as exc:
        raise click.ClickException(str(exc)) from exc
    settings = AgUiSettings(config=config, db=db, host=host, port=port, people=people)
    shown = f"[{host}]" if ":" in host else host
    login = f"bearer tokens of {len(people)} person(s)" if people else "no login (this machine only)"
    click.echo(
        f"toolwire agent {name}: AG-UI at http://{shown}:{port}{PATH} ; runs in {store_name(db)}; {login}", err=True
    )
    config_ = uvicorn.Config(build_app(settings), host=host, port=port, log_level="warning", lifespan="on")
    uvicorn.Server(config_).run()
