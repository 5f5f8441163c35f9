"""`toolwire agent serve`: one configured agent (the options of `toolwire run`) served to other programs over an
agent protocol: A2A (`--a2a`, toolwire_client.a2a: callers are the tokens file's agents) for other agents, AG-UI
(`--ag-ui`, toolwire_client.agui: callers are its people) for front ends. Bound to 127.0.0.1 by default; bound to
any other address it requires the tokens file."""

from typing import Any

import click

from toolwire_client.cli._callers import read_callers
from toolwire_client.cli._store import db_option, store_name
from toolwire_client.cli.agent_fleet import fleet_config, fleet_options, no_fleet_servers
from toolwire_client.cli.run_config import config_from, config_options
from toolwire_client.cli.servers import servers_file_option
from toolwire_client.config import RunConfig


@click.group("agent")
def agent() -> None:
    """Serve a configured agent to other programs: A2A agents (`serve --a2a`), AG-UI front ends (`--ag-ui`)."""


@agent.command("serve")
@click.option("--a2a", is_flag=True, help="Serve A2A (Agent2Agent) at /: each A2A task a saved, resumable run.")
@click.option("--ag-ui", "ag_ui", is_flag=True, help="Serve AG-UI at /ag-ui: a front end's run, streamed as events.")
@click.option("--name", default="agent", show_default=True, help="The agent's name (the runs' agent, for --tokens).")
@config_options
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind; not loopback needs --tokens.")
@click.option("--port", type=click.IntRange(0, 65535), help="Port to bind (default 8410 for A2A, 8500 for AG-UI).")
@click.option(
    "--tokens",
    "tokens_file",
    metavar="FILE",
    help="Require `Authorization: Bearer TOKEN` ($TOOLWIRE_TOKENS too): with --a2a, an agent's of the tool server's "
    "tokens file (a caller sees only its own tasks); with --ag-ui, a person's of its [people.NAME] tables (as "
    "`toolwire ui --tokens`: each runs, follows and decides only the runs of their agents).",
)
@click.option("--description", default=None, help="With --a2a: what the agent does, for its Agent Card.")
@click.option("--public-url", metavar="URL", help="With --a2a: where clients reach it, for the card.")
@servers_file_option("With --a2a: tool servers a task resumed here may start, by the names it saved.")
@fleet_options
def serve(
    a2a: bool,
    ag_ui: bool,
    name: str,
    db: str | None,
    host: str,
    port: int | None,
    tokens_file: str | None,
    description: str | None,
    public_url: str | None,
    servers_file: str | None,
    fleet: bool,
    fleet_servers: list[str],
    **options: Any,
) -> None:
    """Serve the agent the options describe over an agent protocol, until stopped (Ctrl-C)."""
    if a2a == ag_ui:
        raise click.UsageError("name one protocol to serve: --a2a or --ag-ui")
    if not fleet:
        no_fleet_servers(fleet_servers)
    config = (fleet_config(fleet_servers, options) if fleet else config_from(**options)).model_copy(
        update={"name": name}
    )
    if a2a:
        from toolwire_client.cli.a2a import serve_a2a

        serve_a2a(config, db, host, port or 8410, tokens_file, description, public_url, servers_file, fleet)
        return
    _serve_ag_ui(config, db, host, port or 8500, tokens_file, fleet)


def _serve_ag_ui(
    config: RunConfig, db: str | None, host: str, port: int, tokens_file: str | None, fleet: bool = False
) -> None:
    from toolwire_client.cli.door_serve import serve_door
    from toolwire_client.ui.people import people_callers

    people = read_callers(tokens_file, host, people_callers, "the agent: give --tokens FILE")
    from toolwire_client.agui.app import PATH, AgUiSettings, build_app
    from toolwire_server.transports.http import PortInUse, check_bindable

    try:
        check_bindable(host, port)
    except PortInUse as exc:
        raise click.ClickException(str(exc)) from exc
    settings = AgUiSettings(config=config, db=db, host=host, port=port, people=people, fleet=fleet)
    shown = f"[{host}]" if ":" in host else host
    login = f"{people.login()} (people)" if people else "no login (this machine only)"
    click.echo(
        f"toolwire agent {config.name}: AG-UI at http://{shown}:{port}{PATH} ; runs in {store_name(db)}"
        + (" (driven by the worker fleet)" if fleet else "")
        + f"; {login}",
        err=True,
    )
    door = f"toolwire agent serve --ag-ui{' --fleet' if fleet else ''} at http://{shown}:{port}{PATH}"
    serve_door(build_app(settings), host, port, db, fleet, door)
