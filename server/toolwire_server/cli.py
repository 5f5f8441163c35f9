"""`toolwire serve [FILE|MODULE[:ATTR]] [--http]` (also `python -m toolwire_server`): serve a tool registry over
MCP, and `toolwire check FILE`: check a configuration file. They live with the server so a tool server installs and
runs without the agent loop."""

import logging
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

import click

from toolwire_shared.words import counted

F = TypeVar("F", bound=Callable[..., Any])


_EXISTING_FILE = click.Path(exists=True, dir_okay=False)
# the ranges several limits share
_BYTES = click.IntRange(min=1024)
_COUNT = click.IntRange(min=1)
_SECONDS = click.FloatRange(min=0.1)

LIMIT_OPTIONS: tuple[tuple[str, str, "click.ParamType[Any]", str], ...] = (
    ("--max-result-chars", "max_result_chars", click.IntRange(min=100), "Cut tool results longer than this."),
    ("--max-body-bytes", "max_body_bytes", _BYTES, "Refuse HTTP request bodies over this (413)."),
    (
        "--max-line-bytes",
        "max_line_bytes",
        _BYTES,
        "stdio: skip and answer (JSON-RPC error) request lines over this [default: 16 MiB].",
    ),
    ("--max-sessions", "max_sessions", _COUNT, "HTTP: legacy sessions open at once [default: 1000]."),
    (
        "--max-sessions-per-agent",
        "max_sessions_per_agent",
        _COUNT,
        "HTTP: sessions one agent (token) may hold; at the cap its oldest idle one is closed [default: 100].",
    ),
    (
        "--max-listen-streams-per-agent",
        "max_listen_streams_per_agent",
        _COUNT,
        "subscriptions/listen streams one agent may hold open; one more is refused [default: 16].",
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
        _SECONDS,
        "HTTP: close a connection whose request headers take longer (seconds) [default: 10].",
    ),
    (
        "--body-timeout",
        "body_timeout_s",
        _SECONDS,
        "HTTP: answer 408 and close when a request body takes longer (seconds) [default: 30].",
    ),
)
"""Each option sets the ServerLimits field it names; unset, the field keeps its default."""


def _replica_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from toolwire_server.transports.replica_sessions import check_replica_name

    try:
        return None if value is None else check_replica_name(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc


def _allowed_option(flag: str, field: str, metavar: str, check: Callable[[str], str], text: str) -> Callable[[F], F]:
    """A repeatable option whose every value `check` accepts (host_origin.py); its ValueError is a usage error."""

    def callback(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
        try:
            return tuple(check(value) for value in values)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from exc

    return click.option(flag, field, multiple=True, metavar=metavar, callback=callback, help=text)


def _file_option(*names: str, **attrs: Any) -> Callable[[F], F]:
    """An option naming a file that must be there (click's usage error names a missing one)."""
    return click.option(*names, type=_EXISTING_FILE, **attrs)


def _check_host(value: str) -> str:
    from toolwire_server.transports.host_origin import check_allowed_host

    return check_allowed_host(value)


def _check_origin(value: str) -> str:
    from toolwire_server.transports.host_origin import check_allowed_origin

    return check_allowed_origin(value)


def limit_options(command: F) -> F:
    for flag, field, kind, text in reversed(LIMIT_OPTIONS):
        command = click.option(flag, field, type=kind, help=text)(command)
    return command


TARGET_HELP = "FILE|MODULE[:ATTR]"
"""What `serve` takes: a .py file or a module, with `:ATTR` naming its Registry (or a function returning one) when it
holds more than one."""


@click.command()
@click.argument("target", metavar=f"[{TARGET_HELP}]", required=False)
@_file_option(
    "--config",
    "config_file",
    help="The server's configuration file (TOML): tools module, agents and grants, limits and quotas, audit "
    "(docs/hosting.md). Instead of --tokens.",
)
@_file_option(
    "--check",
    "check_file",
    metavar="FILE",
    hidden=True,
    help="Old spelling of `toolwire check FILE` (kept for one release).",
)
@click.option("--stdio", is_flag=True, help="Serve on stdin/stdout, logs to stderr [the default].")
@click.option("--http", is_flag=True, help="Serve Streamable HTTP at /mcp under uvicorn.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="HTTP port.")
@_file_option(
    "--tokens",
    "tokens_file",
    help="TOML/JSON access config: bearer token (or, with an [oauth] table, an OAuth access token's subject) -> "
    "agent and tool globs (else $TOOLWIRE_TOKENS).",
)
@click.option("--agent", help="stdio: serve only this agent's tools from the access config.")
@limit_options
@_allowed_option(
    "--allowed-host",
    "allowed_hosts",
    "HOST",
    _check_host,
    "HTTP: also answer this Host header (NAME, NAME:PORT, or NAME:* for any port; repeatable) and browser "
    "pages on it. Always answered, on any port: localhost, 127.0.0.1, [::1] and the bound address (bound to 0.0.0.0 "
    "or ::, this machine's names and addresses); any other Host gets 421 (DNS-rebinding protection).",
)
@_allowed_option(
    "--allowed-origin",
    "allowed_origins",
    "ORIGIN",
    _check_origin,
    "HTTP: also serve browser pages from this Origin (SCHEME://NAME[:PORT], or ...:* for any port; "
    "repeatable). Always served: requests with no Origin (not from a browser) and pages on an answered name at the "
    "served port; any other Origin gets 403.",
)
@click.option(
    "--isolate",
    is_flag=True,
    help="Run every tool in a worker process, killed on timeout or cancel (tools can also opt in one by one).",
)
@click.option(
    "--isolate-workers",
    type=click.IntRange(min=1),
    help="Worker processes for isolated tools (calls beyond this wait) [default: 2-4, by CPU count].",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    help="HTTP: serve the port from N processes; N > 1 serves only stateless 2026-07-28 clients [default: 1].",
)
@click.option(
    "--replica",
    metavar="NAME",
    callback=_replica_name,
    help="HTTP: this replica's name, at the start of its legacy session ids, for a proxy to route each session "
    "back to it (deploy/nginx.conf).",
)
@click.option("--log-level", default="WARNING", show_default=True, help="stderr log level.")
def serve(
    target: str | None,
    config_file: str | None,
    check_file: str | None,
    stdio: bool,
    http: bool,
    host: str,
    port: int,
    tokens_file: str | None,
    agent: str | None,
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
    isolate: bool,
    isolate_workers: int | None,
    workers: int | None,
    replica: str | None,
    log_level: str,
    **limit_values: float | None,
) -> None:
    """Serve a tool registry over MCP: on stdio, or over HTTP with --http.

    The registry is the one Registry in FILE (tools.py) or MODULE, or the one ATTR names (a Registry or a function
    returning one); with --config, the file's `tools` names it.
    """
    import anyio

    import toolwire_server as ts
    from toolwire_server.limits import ServerLimits
    from toolwire_server.transports.processes import ServeSpec

    if check_file is not None:
        click.echo(
            f"toolwire: `serve --check FILE` is now `toolwire check {check_file}` (the old spelling goes in "
            "the next release)",
            err=True,
        )
        _check(check_file, target)
        return
    if stdio and http:
        raise click.UsageError("--stdio and --http both given: serve one transport (stdio is the default)")
    transport = "http" if http else "stdio"
    if config_file is not None and tokens_file is not None:
        raise click.UsageError("--config holds the agents: give it or --tokens, not both")
    _one_source(config_file, target)
    if target is None and config_file is None:
        raise click.UsageError(
            'name the tools to serve: FILE (tools.py), MODULE[:ATTR], or --config FILE with tools = "MODULE:ATTR"'
        )
    if transport == "stdio" and (workers is not None or replica is not None):
        flag = "--workers" if workers is not None else "--replica"
        raise click.UsageError(f"{flag} is for --http (for the isolated tools' pool, use --isolate-workers N)")
    if replica is not None and (workers or 1) > 1:
        raise click.UsageError(
            "--replica names one process's sessions; --workers N > 1 serves no sessions: run one replica per port"
        )
    logging.basicConfig(
        stream=sys.stderr, level=log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    limits = ServerLimits(**{name: value for name, value in limit_values.items() if value is not None})  # type: ignore[arg-type]
    spec = ServeSpec(
        target or "",
        config_file=os.path.abspath(config_file) if config_file else None,
        tokens_file=os.path.abspath(tokens_file) if tokens_file else None,
        limits=limits,
        host=host,
        port=port,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        isolate=isolate,
        isolate_workers=isolate_workers,
        replica=replica,
        workers=workers or 1,
        log_level=log_level,
        agent_tokens=transport == "http",
    )
    try:
        registry, access = spec.load()
    except (ts.AccessConfigError, ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from exc
    from toolwire_otel.setup import configure_server_tracing

    configure_server_tracing()  # no-op unless OTEL_* variables ask for export; spans join the caller's trace
    if transport == "stdio":
        if sys.stdin.isatty():  # a person ran it: stdio waits for an MCP client, say so
            click.echo(
                f"toolwire: serving {len(registry)} tools on stdio, for an MCP client that starts this command; "
                "--http serves them on a port (`toolwire dev FILE` for the MCP Inspector)",
                err=True,
            )
        grant = ts.ALL_TOOLS
        if agent:
            if access is None:
                raise click.UsageError(
                    "--agent needs an access config (--config or --tokens FILE, or $TOOLWIRE_TOKENS)"
                )
            try:
                grant = access.grant_for_agent(agent)
            except ts.AccessConfigError as exc:
                raise click.ClickException(str(exc)) from exc
        if access is not None and access.oauth is not None:
            logging.getLogger("toolwire.server").info("stdio: the [oauth] table applies to --http only")
        audit = registry.policy.audit if registry.policy is not None else None
        if audit is not None:  # SIGTERM ends the process cleanly, so the audit records still queued are written
            signal.signal(signal.SIGTERM, _stop_on_sigterm)
        try:
            anyio.run(lambda: ts.serve_stdio(registry, limits=limits, grant=grant))
        finally:
            if audit is not None:
                audit.close()
        return
    from toolwire_server.transports.http import PortInUse, check_bindable

    try:
        check_bindable(host, port)  # before "serving": a port in use is this one line, not uvicorn's after it
    except PortInUse as exc:
        raise click.ClickException(str(exc)) from exc
    if access is None:
        logging.getLogger("toolwire.server").warning("no access config: every caller may use every tool")
    app = spec.app(registry, access)  # with --workers too: a mistake is one line here, not one traceback per worker
    click.echo(f"toolwire: serving {len(registry)} tools at http://{host}:{port}/mcp", err=True)
    if replica is not None:
        click.echo(f"toolwire: replica {replica!r}: its session ids start with '{replica}.'", err=True)
    if access is not None and access.oauth is not None:
        from toolwire_server.auth.oauth import metadata_url

        settings = access.oauth
        click.echo(f"toolwire: OAuth access tokens from {settings.issuer} for {settings.resource}", err=True)
        click.echo(f"toolwire: protected-resource metadata at {metadata_url(settings.resource)}", err=True)
    if spec.workers == 1:
        ts.serve_http(app, host=host, port=port, limits=limits)
        return
    from toolwire_server.transports.processes import serve_workers

    click.echo(
        f"toolwire: {spec.workers} worker processes on one port: stateless 2026-07-28 clients only; a legacy "
        "session (initialize, Mcp-Session-Id) is refused, since it could not find its process again. For legacy "
        "clients run one `serve --http --replica NAME` per port behind a proxy (deploy/README.md).",
        err=True,
    )
    if not serve_workers(replace(spec, target=registry.source or spec.target)):
        raise click.ClickException("a worker process failed to start (its error is above); stopped")


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


@click.command()
@click.argument("config_file", metavar="FILE", type=_EXISTING_FILE)
@click.argument("target", metavar=f"[{TARGET_HELP}]", required=False)
def check(config_file: str, target: str | None) -> None:
    """Check a configuration file and load its tools without serving; exit 1 with the mistake.

    Everything `toolwire serve --config FILE --http` checks before it serves, the agents' token variables included;
    the upstreams are not started. TARGET names the tools when the file has no `tools`.
    """
    _check(config_file, target)


def _check(path: str, target: str | None) -> None:
    """Everything `serve --config FILE` checks before it serves, then one line saying so."""
    _one_source(path, target)
    import toolwire_server as ts
    from toolwire_server.transports.processes import ServeSpec

    try:
        registry, access = ServeSpec(target or "", config_file=os.path.abspath(path)).load()
    except (ts.AccessConfigError, ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from exc
    policy = registry.policy
    agents = len({g.agent for g in [*access.grants.values(), *access.subjects.values()]}) if access else 0
    rules = len(policy.rules) if policy else 0
    audit = "on" if policy is not None and policy.audit is not None else "off"
    upstreams = f", {counted(len(registry.mounts), 'upstream')} (not started)" if registry.mounts else ""
    counts = f"{counted(len(registry), 'tool')}, {counted(agents, 'agent')}, {counted(rules, 'limit rule')}"
    click.echo(f"{path}: ok: {counts}, audit {audit}{upstreams}")


def _one_source(config_file: str | None, target: str | None) -> None:
    """A TARGET beside a config file whose `tools` names the registry: which one was meant is not ours to guess."""
    if config_file is None or target is None:
        return
    from toolwire_server.policy.config import ConfigError, load_config

    try:
        tools = load_config(config_file).config.tools
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    if tools is not None:
        raise click.UsageError(
            f"{target} and --config {config_file} (tools = {tools!r}) both name the tools: give one of them"
        )
