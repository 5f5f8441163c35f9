"""The code-mode layer (a ToolLayer, tools/tool_layers.py): `run_code` offered over the tools below it, each
listed in its description as a typed Python function; with `only`, those tools are kept from the model (still
routed: a script calls them by name through the ToolBox).

Over a tool search (tools/tool_search.py) the two compose: a script may call every tool the run may call, and
`run_code` lists only the tools the search has loaded, with a line saying `search_tools` finds the others (a load
routes again, so what a search finds is listed from the next request on). A tool not loaded yet is routed to the
tool itself, kept from the model, not to the search's gate: a script's call of it runs it (under its own approval
policy). `search_tools` stays the model's, offered even with `only`, and is not a script's function."""

from collections.abc import Sequence
from dataclasses import replace

from toolwire_client import texts
from toolwire_client.strategies.code_mode import CodeMode
from toolwire_client.tools.code_mode.sandbox import ScriptTools, require_monty
from toolwire_client.tools.code_mode.signatures import python_names, signature
from toolwire_client.tools.code_mode.source import TOOL, CodeModeSource, spec_of
from toolwire_client.tools.source import ToolSource
from toolwire_client.tools.tool_layers import Route
from toolwire_shared.tool_index import SEARCH_TOOL
from toolwire_shared.wire_names import wire_names


class CodeModeLayer:
    def __init__(self, options: CodeMode) -> None:
        require_monty()
        self.options = options
        self.source = CodeModeSource(options)

    def changed(self) -> bool:
        return False  # it offers run_code from the start; what it lists follows the routes below it

    def check(self, named: list[Route], sources: Sequence[ToolSource]) -> None:
        return None

    def offer(self, routes: list[Route]) -> list[Route]:
        wire = wire_names([*(route.known for route in routes), TOOL])  # as WireNames, above, will name them
        own = [route for route in routes if route.known not in (TOOL, SEARCH_TOOL)]
        # listed: not a tool search's tool it has not loaded yet (gated, or deferred to the provider's own search)
        listed = {route.known for route in own if route.offered and not route.spec.deferred}
        tools = [route.unloaded or route for route in own]  # every tool a script may call
        names = python_names(wire[route.known] for route in tools)
        self.source.tools = ScriptTools(
            {names[wire[r.known]]: wire[r.known] for r in tools}, {wire[r.known]: r.spec for r in tools}
        )
        listing = "\n".join(signature(names[wire[r.known]], r.spec) for r in tools if r.known in listed)
        o = self.options
        description = texts.run_code_description(
            listing, o.max_tool_calls, o.max_script_s, o.max_memory_mb, o.max_output_chars
        )
        if len(tools) > len(listed):
            description += texts.run_code_unlisted(len(tools) - len(listed))
        kept = [self._kept(route) for route in routes]
        return [*kept, Route(self.source, TOOL, spec_of(description), TOOL, frozenset({TOOL}))]

    def _kept(self, route: Route) -> Route:
        """A route as offered above: the tool itself for a tool search's gate (a script runs it); kept from the
        model with `only`, but for search_tools, the model's way to find tools."""
        if route.unloaded is not None:
            return replace(route.unloaded, offered=False)
        if self.options.only and route.known != SEARCH_TOOL:
            return replace(route, offered=False)
        return route
