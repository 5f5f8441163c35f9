"""Discovery by search (`serve --config` with `[discovery] mode = "search"`): instead of every tool, any MCP client
is listed two tools, `search_tools` and `call_tool`. A search ranks the tools the caller's grant allows (BM25,
toolwire_shared/tool_index.py) and answers with their names, one-line descriptions and arguments; `call_tool(name,
arguments)` is that tool's call, sent on through the one call pipeline (grants, limits, audit) under its own name.

Why `call_tool` rather than listing what a search found through `notifications/tools/list_changed`: every MCP client
calls a listed tool, while many list tools once and never again (or per session, which a stateless 2026-07-28 HTTP
client and `--workers` processes do not have); a search keeps no state here, so it works on every transport and
process alike."""

import json
from typing import Any

import mcp_types as types

from toolwire_server.auth.access import Grant
from toolwire_server.tools.registry import Registry
from toolwire_shared.tool_index import (
    SEARCH_SPEC,
    SEARCH_TOOL,
    BadSearch,
    ToolIndex,
    one_line,
    search_answer,
    search_arguments,
)
from toolwire_shared.tools import ToolSpec

CALL_TOOL = "call_tool"
THEN = 'Call one with call_tool: {"name": "<its name>", "arguments": {...}}, its arguments as listed.'
DISCOVERY_TOOLS = [
    types.Tool(
        name=SEARCH_TOOL,
        description=(
            "Find this server's tools for a job: give a few words of what you want to do (or a tool's name); the "
            "best matches come back with their arguments. Then call one with call_tool."
        ),
        input_schema=SEARCH_SPEC.input_schema,
    ),
    types.Tool(
        name=CALL_TOOL,
        description="Call a tool that search_tools found, by its name, with its arguments.",
        input_schema={
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's name, as search_tools gave it."},
                "arguments": {"type": "object", "description": "The tool's arguments, as search_tools listed them."},
            },
            "required": ["name"],
            "additionalProperties": False,
        },
    ),
]
LISTING = types.ListToolsResult(tools=DISCOVERY_TOOLS)


class Discovery:
    """The search index of each grant's tools, made again when a tool is registered (the registry's version)."""

    def __init__(self, registry: Registry):
        self.registry = registry
        self._indexes: dict[Grant, tuple[int, ToolIndex]] = {}

    def index(self, who: Grant) -> ToolIndex:
        version = self.registry.version
        held = self._indexes.get(who)
        if held is None or held[0] != version:
            allowed = [t for t in self.registry if who.allows(t.name)]  # never a tool the caller may not call
            specs = [ToolSpec(name=t.name, description=t.description, input_schema=t.schema) for t in allowed]
            held = self._indexes[who] = (version, ToolIndex(specs))
        return held[1]

    def answer(
        self, who: Grant, name: str, arguments: dict[str, Any] | None
    ) -> types.CallToolResult | tuple[str, dict[str, Any] | None]:
        """A search's result; or, for `call_tool`, the (name, arguments) of the call to send on through the
        pipeline (a tool named directly goes on as it is)."""
        if name == SEARCH_TOOL:
            return self._search(who, arguments or {})
        if name != CALL_TOOL:
            return name, arguments
        called, inner = (arguments or {}).get("name"), (arguments or {}).get("arguments")
        if not isinstance(called, str) or not called or not isinstance(inner, dict | None):
            example = '{"name": "get_order", "arguments": {"order_id": "A123"}}'
            return _error(f"call_tool needs the tool's `name` and its `arguments` (an object), e.g. {example}")
        return called, inner

    def _search(self, who: Grant, arguments: dict[str, Any]) -> types.CallToolResult:
        try:
            query, limit = search_arguments(arguments)
        except BadSearch as exc:
            return _error(str(exc))
        found = self.index(who).search(query, limit)
        lines = [
            (spec.name, f"{one_line(spec.description)} Arguments: {json.dumps(spec.input_schema)}") for spec in found
        ]
        return types.CallToolResult(content=[types.TextContent(type="text", text=search_answer(query, lines, THEN))])


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
