"""`toolwire tools` and `toolwire call`: what a tool server offers, and one call of one tool, from the shell, with no
model and no key, on the servers `toolwire run` takes (the same options), so nobody writes an MCP client to poke one."""

import json
import sys
from typing import Any

import anyio
import click
import mcp_types as types
from rich.console import Console
from rich.table import Table

from toolwire_client.assembly.sources import build_sources
from toolwire_client.cli import servers
from toolwire_client.config import ServerSpec
from toolwire_client.mistakes import USAGE, mistake
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.server_stderr import LineSink
from toolwire_client.tools.source import RunContext
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.ids import new_run_id
from toolwire_shared.messages import ToolCall
from toolwire_shared.results import ToolResult
from toolwire_shared.tools import ToolPolicy, ToolSpec

_verbose = click.option("-v", "--verbose", is_flag=True, help="Show the tool servers' own output (stderr).")


def _connection_options(fn: Any) -> Any:
    for option in reversed(servers.CONNECTION_OPTIONS):
        fn = option(fn)
    return fn


def _server_specs(options: dict[str, Any]) -> list[ServerSpec]:
    if not options["commands"] and not options["urls"]:
        raise click.UsageError("name a tool server: --server 'CMD' or --server-url URL")
    return servers.server_specs(options["commands"], options["urls"], options["token_env"], options["server_env"])


def _stderr(verbose: bool) -> LineSink:
    """A stdio server's stderr: shown with -v, else dropped (a server that fails to start is still quoted)."""

    def sink(server: str, line: str) -> None:
        if verbose:
            click.echo(f"{server}| {line}", err=True)

    return sink


@click.command("tools")
@_connection_options
@_verbose
@click.option("--json", "as_json", is_flag=True, help="Print every tool as the server lists it, schemas and all.")
def tools_command(verbose: bool, as_json: bool, **options: Any) -> None:
    """List the tools the servers offer: name, arguments, annotations, description."""
    specs = _server_specs(options)
    listed = anyio.run(_list, specs, _stderr(verbose))
    if as_json:
        rows = [
            {"server": server, **tool.model_dump(mode="json", by_alias=True, exclude_none=True)}
            for server, tool in listed
        ]
        click.echo(json.dumps(rows, indent=2))
        return
    if not listed:
        click.echo("the servers list no tools")
        return
    table = Table(
        *(["server"] if len(specs) > 1 else []), "tool", "arguments (* required)", "annotations", "description"
    )
    for server, tool in listed:
        row = [tool.name, _arguments(tool.input_schema), _annotations(tool), (tool.description or "").strip()]
        table.add_row(*([server] if len(specs) > 1 else []), *row)
    Console(width=200).print(table)


async def _list(specs: list[ServerSpec], sink: LineSink) -> list[tuple[str, types.Tool]]:
    listed: list[tuple[str, types.Tool]] = []
    for source in build_sources(specs, sink):
        assert isinstance(source, McpSource)  # no shared connections outside a fleet
        await source.start()
        try:
            listed += [(source.name, tool) for tool in await source.list_mcp_tools()]
        finally:
            await source.aclose()
    return listed


def _arguments(schema: dict[str, Any]) -> str:
    required = set(schema.get("required") or [])
    properties: dict[str, Any] = schema.get("properties") or {}
    return ", ".join(f"{name}{'*' if name in required else ''}: {_type(each)}" for name, each in properties.items())


def _type(schema: object) -> str:
    if not isinstance(schema, dict):
        return "any"
    if "enum" in schema:
        return "|".join(json.dumps(value) for value in schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return "|".join(map(str, kind))
    if "anyOf" in schema:
        return "|".join(_type(each) for each in schema["anyOf"])
    return str(kind or "any")


def _annotations(tool: types.Tool) -> str:
    """The MCP hints the server gives (only those it gives), and toolwire's own policy when it asks for approval."""
    hints = tool.annotations
    words = []
    if hints is not None:
        for value, yes, no in (
            (hints.read_only_hint, "read-only", "not read-only"),
            (hints.destructive_hint, "destructive", "not destructive"),
            (hints.idempotent_hint, "idempotent", "not idempotent"),
            (hints.open_world_hint, "open world", "closed world"),
        ):
            if value is not None:
                words.append(yes if value else no)
    if ToolPolicy.from_meta(tool.meta).risky:
        words.append("risky (a run asks for approval)")
    return ", ".join(words)


@click.command("call")
@click.argument("tool")
@click.argument("pairs", nargs=-1, metavar="KEY=VALUE")
@click.option(
    "--args", "args_json", metavar="JSON", help='The arguments as one JSON object, e.g. \'{"order_id": "A123"}\'.'
)
@_connection_options
@_verbose
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON: its text, structuredContent, isError.")
def call_command(
    tool: str, pairs: tuple[str, ...], args_json: str | None, verbose: bool, as_json: bool, **options: Any
) -> None:
    """Call TOOL once and print its result (exit 1 when the tool answers with an error).

    Arguments as KEY=VALUE (a VALUE is JSON unless the tool's schema says string: n=2, tags='["a"]', name=Bob) or
    --args JSON; KEY=VALUE goes on top of --args.
    """
    given = _json_arguments(args_json)
    specs = _server_specs(options)
    result = anyio.run(_call, specs, tool, given, pairs, _stderr(verbose))
    if as_json:
        shown = {"tool": tool, "isError": result.is_error, "text": result.content}
        click.echo(json.dumps({**shown, "structuredContent": result.structured}, indent=2, ensure_ascii=False))
    elif result.is_error:
        click.echo(result.content, err=True)
    else:
        click.echo(result.content)
    sys.exit(1 if result.is_error else 0)


def _json_arguments(text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        example = """--args '{"order_id": "A123"}'"""
        raise click.UsageError(f"--args is not JSON ({exc}); give an object, e.g. {example}") from None
    if not isinstance(value, dict):
        raise click.UsageError(f'--args must be a JSON object, not {text}; e.g. --args \'{{"order_id": "A123"}}\'')
    return value


async def _call(
    specs: list[ServerSpec], name: str, given: dict[str, Any], pairs: tuple[str, ...], sink: LineSink
) -> ToolResult:
    async with ToolBox(build_sources(specs, sink)) as box:
        spec = _tool(box, name)
        arguments = {**given, **_pairs(pairs, spec.input_schema)}
        call = ToolCall(id="call_1", name=spec.name, arguments=arguments)
        return await box.call(call, RunContext(run_id=new_run_id()))


def _tool(box: ToolBox, name: str) -> ToolSpec:
    """The tool the user names, by its own name (or SERVER__NAME where two servers share it)."""
    for spec in box.specs:
        if name == spec.name or name in box.aliases(spec.name):
            return spec
    known = ", ".join(sorted(spec.name for spec in box.specs)) or "none"
    raise mistake(f"no tool {name!r} on these servers (their tools: {known}); `toolwire tools` lists them", USAGE)


def _pairs(pairs: tuple[str, ...], schema: dict[str, Any]) -> dict[str, Any]:
    """KEY=VALUE arguments: VALUE as JSON (2, true, [1, 2]) unless the schema makes KEY a string, or it is not JSON."""
    properties: dict[str, Any] = schema.get("properties") or {}
    arguments: dict[str, Any] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key:
            raise mistake(f"{pair!r}: give arguments as KEY=VALUE (e.g. order_id=A123) or --args JSON", USAGE)
        if isinstance(properties.get(key), dict) and properties[key].get("type") == "string":
            arguments[key] = value
            continue
        try:
            arguments[key] = json.loads(value)
        except ValueError:
            arguments[key] = value
    return arguments
