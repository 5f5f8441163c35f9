"""OpenAI's hosted tool search: the native form of tool search (tools/tool_search.py) on the Responses API.

The tools offered `deferred` go out as function tools marked `defer_loading: true`, and one `{"type": "tool_search"}`
tool goes last (executed by OpenAI: `execution` left at its default, "server"). The model searches them inside the
same response: its output then holds a `tool_search_call` item (the query) and a `tool_search_output` item whose
`tools` are the definitions it loaded. Those tools' names are the reply's `found_tools`, which the run records as
loaded. Requests stay stateless (store false): both items are echoed on every later request, as the adapter echoes
all its output items, because the loaded definitions live in that history. The tools sent stay the same from request
to request, so the prompt cache keeps holding (OpenAI adds what it found at the end of the context).

Only gpt-5.4 and later models have it; other Responses models, and Chat Completions, keep toolwire's own
`search_tools`. toolwire sends no namespaces, so only top-level function tools come back in `tools`.

The wire format, from what OpenAI publishes:
- developers.openai.com/api/docs/guides/tools-tool-search: "Add tool_search as a tool in your tools array" and
  "Mark the functions ... with defer_loading: true"; developers.openai.com/api/docs/guides/tools: "Only gpt-5.4 and
  later models support tool_search".
- openai-python (github.com/openai/openai-python, e43b422, 2026-08), src/openai/types/responses/:
  tool_search_tool.py (`type: "tool_search"`, `execution`: "server" | "client"), function_tool.py
  (`defer_loading`), response_tool_search_call.py and response_tool_search_output_item.py (`tools`: "The loaded
  tool definitions returned by tool search"; both with an output-only `created_by`), response_input_item_param.py
  (both are input items; neither takes `created_by`).
- openai-agents-python (github.com/openai/openai-agents-python, 7f7a44f), src/agents/items.py: it drops
  `created_by` from these items before sending them back, as `echoed` does here.
"""

import re
from typing import Any

from toolwire_shared.tools import ToolSpec

TOOL_SEARCH_TOOL: dict[str, Any] = {"type": "tool_search"}
SEARCH_ITEMS = frozenset({"tool_search_call", "tool_search_output"})
OUTPUT_ONLY = "created_by"
"""A field of the search items OpenAI sends but does not take back as input."""

TOOL_SEARCH_MODELS = re.compile(r"^(ft:)?gpt-(5\.([4-9]|[1-9]\d)|[6-9]|[1-9]\d)(?!\d)", re.IGNORECASE)
"""gpt-5.4 and later (gpt-5.4-mini, gpt-5.5, gpt-6, ...; not gpt-5, gpt-5.1, gpt-4.1): the models with tool_search."""


def searches_natively(model: str) -> bool:
    """Whether this Responses model searches deferred tools itself."""
    return TOOL_SEARCH_MODELS.match(model) is not None


def deferring(wire_tools: list[dict[str, Any]], tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """The `tools` array (`wire_tools`, one per spec of `tools`, in order) with each tool offered `deferred` marked
    `defer_loading: true` and the hosted tool search last; unchanged when none is deferred."""
    if not any(spec.deferred for spec in tools):
        return wire_tools
    marked = [
        {**wire, "defer_loading": True} if spec.deferred else wire for wire, spec in zip(wire_tools, tools, strict=True)
    ]
    return [*marked, TOOL_SEARCH_TOOL]


def found_tools(output: list[Any]) -> list[str]:
    """The names of the tools the hosted search loaded in this response: the function tools of its
    `tool_search_output` items."""
    found: list[str] = []
    for item in output:
        if not isinstance(item, dict) or item.get("type") != "tool_search_output":
            continue
        tools = item.get("tools")
        for tool in tools if isinstance(tools, list) else ():
            if isinstance(tool, dict) and tool.get("type") == "function" and isinstance(tool.get("name"), str):
                found.append(tool["name"])
    return found


def echoed(item: dict[str, Any]) -> dict[str, Any]:
    """An earlier output item as the next request's input: a search item without its output-only `created_by`,
    any other item as it came."""
    if OUTPUT_ONLY in item and item.get("type") in SEARCH_ITEMS:
        return {key: value for key, value in item.items() if key != OUTPUT_ONLY}
    return item
