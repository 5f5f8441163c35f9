"""The code-mode layer (a ToolLayer, tools/tool_layers.py): `run_code` offered over the tools below it, each
listed in its description as a typed Python function; with `only`, those tools are kept from the model (still
routed: a script calls them by name through the ToolBox)."""

from collections.abc import Sequence
from dataclasses import replace

from toolwire_client import texts
from toolwire_client.strategies.code_mode import CodeMode
from toolwire_client.tools.code_mode.sandbox import ScriptTools, require_monty
from toolwire_client.tools.code_mode.signatures import python_names, signature
from toolwire_client.tools.code_mode.source import TOOL, CodeModeSource, spec_of
from toolwire_client.tools.source import ToolSource
from toolwire_client.tools.tool_layers import Route
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
        callable_routes = [route for route in routes if route.offered and route.known != TOOL]
        wire = wire_names([*(route.known for route in routes), TOOL])  # as WireNames, above, will name them
        names = python_names(wire[route.known] for route in callable_routes)
        specs = {wire[route.known]: route.spec for route in callable_routes}
        self.source.tools = ScriptTools({names[w]: w for w in specs}, specs)
        listing = "\n".join(signature(names[w], spec) for w, spec in specs.items())
        o = self.options
        spec = spec_of(
            texts.run_code_description(listing, o.max_tool_calls, o.max_script_s, o.max_memory_mb, o.max_output_chars)
        )
        kept = [replace(route, offered=False) for route in routes] if self.options.only else routes
        return [*kept, Route(self.source, TOOL, spec, TOOL, frozenset({TOOL}))]
