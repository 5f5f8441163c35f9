"""`toolwire serve MODULE:ATTR (--stdio | --http)` (also `python -m toolwire_server`): serve a tool registry over
MCP. It lives with the server so a tool server installs and runs without the agent loop."""

import logging
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


LIMIT_OPTIONS: tuple[tuple[str, str, "click.ParamType[Any]", str], ...] = (
    ("--max-result-chars", "max_result_chars", click.IntRange(min=100), "Cut tool results longer than this."),
    ("--max-body-bytes", "max_body_bytes", click.IntRange(min=1024), "Refuse HTTP request bodies over this (413)."),
    (
        "--max-line-bytes",
        "max_line_bytes",
        click.IntRange(min=1024),
        "stdio: skip and answer (JSON-RPC error) request lines over this [default: 16 MiB].",
    ),
    ("--max-sessions", "max_sessions", click.IntRange(min=1), "HTTP: legacy sessions open at once [default: 1000]."),
    (
        "--max-sessions-per-agent",
        "max_sessions_per_agent",
        click.IntRange(min=1),
        "HTTP: sessions one agent (token) may hold; at the cap its oldest idle one is closed [default: 100].",
    ),
    (
        "--session-idle-timeout",
        "session_idle_timeout_s",
        click.FloatRange(min=1),
        "HTTP: close a session idle this many seconds [default: 600].",
    ),
    (
        "--header-timeout",
        "header_timeout_s",
        click.FloatRange(min=0.1),
        "HTTP: close a connection whose request headers take longer (seconds) [default: 10].",
    ),
    (
        "--body-timeout",
        "body_timeout_s",
        click.FloatRange(min=0.1),
        "HTTP: answer 408 and close when a request body takes longer (seconds) [default: 30].",
    ),
)
"""Each option sets the ServerLimits field it names; unset, the field keeps its default."""


def limit_options(command: F) -> F:
    for flag, field, kind, text in reversed(LIMIT_OPTIONS):
        command = click.option(flag, field, type=kind, help=text)(command)
    return command


@click.command()
@click.argument("target", metavar="MODULE:ATTR")
@click.option("--stdio", "transport", flag_value="stdio", help="Serve on stdin/stdout (logs go to stderr).")
@click.option("--http", "transport", flag_value="http", help="Serve Streamable HTTP at /mcp under uvicorn.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="HTTP port.")
@click.option(
    "--tokens",
    "tokens_file",
    type=click.Path(exists=True, dir_okay=False),
    help="TOML/JSON access config: bearer token (or, with an [oauth] table, an OAuth access token's subject) -> "
    "agent and tool globs (else $TOOLWIRE_TOKENS).",
)
@click.option("--agent", help="stdio: serve only this agent's tools from the access config.")
@limit_options
@click.option(
    "--allowed-host", "allowed_hosts", multiple=True, help="Host header to accept (repeatable; default loopback)."
)
@click.option("--allowed-origin", "allowed_origins", multiple=True, help="Origin header to accept (repeatable).")
@click.option(
    "--isolate",
    is_flag=True,
    help="Run every tool in a worker process, killed on timeout or cancel (tools can also opt in one by one).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    help="Worker processes for isolated tools (calls beyond this wait) [default: 2-4, by CPU count].",
)
@click.option("--log-level", default="WARNING", show_default=True, help="stderr log level.")
def serve(
    target: str,
    transport: str | None,
    host: str,
    port: int,
    tokens_file: str | None,
    agent: str | None,
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
    isolate: bool,
    workers: int | None,
    log_level: str,
    **limit_values: float | None,
) -> None:
    """Serve the toolwire Registry at MODULE:ATTR (a Registry or a function returning one)."""
    import anyio

    import toolwire_server as ts
    from toolwire_server.limits import ServerLimits

    if transport is None:
        raise click.UsageError("choose a transport: --stdio or --http")
    logging.basicConfig(
        stream=sys.stderr, level=log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    try:
        registry = ts.load_registry(target)
        access = ts.load_access(tokens_file) if tokens_file else ts.access_from_env()
    except (ts.AccessConfigError, ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from exc
    if isolate:
        registry.isolate_all()
    if workers is not None:
        registry.workers.size = workers
    from toolwire_otel.setup import configure_server_tracing

    configure_server_tracing()  # no-op unless OTEL_* variables ask for export; spans join the caller's trace
    limits = ServerLimits(**{name: value for name, value in limit_values.items() if value is not None})  # type: ignore[arg-type]
    if transport == "stdio":
        grant = ts.ALL_TOOLS
        if agent:
            if access is None:
                raise click.UsageError("--agent needs an access config (--tokens FILE or $TOOLWIRE_TOKENS)")
            try:
                grant = access.grant_for_agent(agent)
            except ts.AccessConfigError as exc:
                raise click.ClickException(str(exc)) from exc
        if access is not None and access.oauth is not None:
            logging.getLogger("toolwire.server").info("stdio: the [oauth] table applies to --http only")
        anyio.run(lambda: ts.serve_stdio(registry, limits=limits, grant=grant))
        return
    if access is None:
        logging.getLogger("toolwire.server").warning("no access config: every caller may use every tool")
    app = ts.http_app(
        registry,
        access=access,
        limits=limits,
        host=host,
        allowed_hosts=list(allowed_hosts) or None,
        allowed_origins=list(allowed_origins) or None,
    )
    click.echo(f"toolwire: serving {len(registry)} tools at http://{host}:{port}/mcp", err=True)
    if access is not None and access.oauth is not None:
        from toolwire_server.oauth import metadata_url

        settings = access.oauth
        click.echo(f"toolwire: OAuth access tokens from {settings.issuer} for {settings.resource}", err=True)
        click.echo(f"toolwire: protected-resource metadata at {metadata_url(settings.resource)}", err=True)
    ts.serve_http(app, host=host, port=port, limits=limits)
