"""`toolwire ui`: the run console in a browser (toolwire_client.ui). Bound to 127.0.0.1 by default; bound to any
other address it requires a login by a person of a tokens file (its `[people.NAME]` tables, ui/people.py: never an
agent's tool token), and refuses to start without one."""

import click

from toolwire_client.cli._callers import read_callers
from toolwire_client.cli._store import db_option, store_name, with_store
from toolwire_client.cli.servers import servers_file_option


async def _exists(store: object) -> None:
    """Nothing to do: opening the store (create=False) is the check."""


@click.command("ui")
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind; not loopback needs --tokens.")
@click.option("--port", default=8400, show_default=True, type=click.IntRange(0, 65535), help="Port to bind.")
@click.option(
    "--tokens",
    "tokens_file",
    metavar="FILE",
    help="Require a login by a person of this file's [people.NAME] tables (TOML/JSON, may be the file of `toolwire "
    "serve --tokens`; $TOOLWIRE_TOKENS too): each sees and decides only the runs of their agents; decisions are "
    "recorded under their name.",
)
@servers_file_option("Tool servers a run resumed here may start, by the names it saved (as `toolwire resume`).")
@click.option(
    "--trace-url",
    envvar="TOOLWIRE_TRACE_URL",
    metavar="URL",
    help="Link each run's trace id to a tracing backend: a URL with {trace_id} in it ($TOOLWIRE_TRACE_URL).",
)
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="NAME[:PORT]", help="Also answer this Host.")
@click.option("--allowed-origin", "allowed_origins", multiple=True, metavar="ORIGIN", help="Also accept this Origin.")
def ui(
    db: str | None,
    host: str,
    port: int,
    tokens_file: str | None,
    servers_file: str | None,
    trace_url: str | None,
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
) -> None:
    """A run console in the browser: runs live, a run's steps and waterfall, approve or reject waiting calls."""
    import uvicorn

    from toolwire_client.assembly.trusted_servers import resume_trust
    from toolwire_client.ui import UiSettings, build_app
    from toolwire_client.ui.people import people_tokens
    from toolwire_shared.host_origin import check_allowed_host, check_allowed_origin

    people = read_callers(
        tokens_file,
        host,
        people_tokens,
        "the console, so it needs a login: give --tokens FILE (the tool server's tokens file)",
    )
    if trace_url is not None and "{trace_id}" not in trace_url:
        raise click.BadParameter(f"{trace_url!r} has no {{trace_id}} in it", param_hint="--trace-url")
    try:
        hosts = tuple(check_allowed_host(h) for h in allowed_hosts)
        origins = tuple(check_allowed_origin(o) for o in allowed_origins)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    with_store(db, _exists)  # a console of a store that is not there: one line (StoreMissing), none made
    from toolwire_server.transports.http import PortInUse, check_bindable

    try:
        check_bindable(host, port)  # a port in use: this one line and exit 1, as `serve` says it
    except PortInUse as exc:
        raise click.ClickException(str(exc)) from exc
    settings = UiSettings(
        db=db,
        host=host,
        port=port,
        people=people,
        trust=resume_trust(servers_file),
        trace_url=trace_url,
        allowed_hosts=hosts,
        allowed_origins=origins,
    )
    shown = f"[{host}]" if ":" in host else host
    login = f"a login by {len(people)} person(s) of the tokens file" if people else "no login (this machine only)"
    click.echo(f"toolwire ui: http://{shown}:{port}/ ; runs of {store_name(db)}; {login}; Ctrl-C stops it", err=True)
    config = uvicorn.Config(
        build_app(settings), host=host, port=port, log_level="warning", timeout_graceful_shutdown=2, lifespan="on"
    )
    uvicorn.Server(config).run()
