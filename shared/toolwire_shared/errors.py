"""The tool-call failure texts both sides write, the tool server and the agent loop alike, for the model that
made the call: bad arguments, an unknown tool, prompt or resource, a failure, a timeout, a refusal, a result that
breaks its output schema; and `clip`/`quoted`, how much of a caller's value a text may quote. One wording on both
sides: a failure says what was wrong and what a correct call looks like, so the model can repair the call on its
next step. The server's own texts (protocol, HTTP, tokens) are in toolwire_server.texts; the agent loop's (prompts,
tool descriptions, its own failures) in toolwire_client.texts."""

import json
from collections.abc import Iterable
from typing import Any

QUOTE_CHARS = 200
"""How much of a caller's value (an argument, a tool name) an error quotes: never a hostile value whole."""


def clip(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters, else its start and how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [cut: {len(text)} characters in all]"


def quoted(value: Any, limit: int = QUOTE_CHARS) -> str:
    """`repr(value)`, clipped."""
    return clip(repr(value), limit)


def unknown_tool(name: str, available: Iterable[str]) -> str:
    names = sorted(available)
    listing = ", ".join(names) if names else "(none)"
    return f"ERROR: unknown tool '{clip(name, QUOTE_CHARS)}'. Tools you may call: {listing}."


def example_call(name: str, schema: dict[str, Any]) -> str:
    """A correct call built from the schema: required arguments with a placeholder of the right type."""
    props: dict[str, Any] = schema.get("properties", {})
    required = schema.get("required", list(props))
    args = {key: _placeholder(props.get(key, {})) for key in required}
    return f"{name}({json.dumps(args)})"


def _placeholder(prop: dict[str, Any]) -> Any:
    if "enum" in prop:
        return prop["enum"][0]
    if "default" in prop:
        return prop["default"]
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    examples = {"string": "...", "integer": 1, "number": 1.0, "boolean": True, "array": [], "object": {}}
    if kind == "integer" and "minimum" in prop:
        return prop["minimum"]
    return examples.get(kind or "string", "...")


def bad_arguments(name: str, problems: list[str], schema: dict[str, Any]) -> str:
    props = schema.get("properties", {})
    return (
        f"ERROR: bad arguments for {name}: {'; '.join(problems)}. "
        f"{name} expects {json.dumps(props)} (required: {schema.get('required', [])}). "
        f"A correct call looks like {example_call(name, schema)}."
    )


def more_problems(count: int) -> str:
    return f"and {count} more problems"


def tool_failed(name: str, message: str) -> str:
    return f"ERROR: {name} failed: {message}"


def output_problem(where: str, message: str, value: Any) -> str:
    """One way a result differs from the tool's output schema; `where` is the path inside the result."""
    return f"at '{clip(where, QUOTE_CHARS) or '(result)'}': {clip(message, QUOTE_CHARS)} (got {quoted(value)})"


def no_structured_output() -> str:
    return "the tool declares an output schema, but the result has no structuredContent"


def bad_output(name: str, problems: list[str]) -> str:
    return (
        f"ERROR: {name} returned a result that does not match its own output schema: {'; '.join(problems)}. "
        "The result was discarded. This is a fault in the tool, not in your call: do not repeat the call "
        "unchanged; use another tool, or answer with what you have."
    )


def unknown_prompt(name: str, known: Iterable[str]) -> str:
    listing = ", ".join(sorted(known)) or "(none)"
    return f"unknown prompt '{clip(name, QUOTE_CHARS)}'. Prompts on this server: {listing}."


def unknown_resource(uri: str, known: Iterable[str]) -> str:
    listing = ", ".join(known) or "(none)"
    return f"unknown resource '{clip(uri, QUOTE_CHARS)}'. Resources and templates on this server: {listing}."


def timed_out(name: str, seconds: float) -> str:
    return (
        f"ERROR: {name} timed out after {seconds:g} s and was cancelled. "
        "Try again with a narrower request, or use another tool."
    )


def refused(name: str, agent: str | None) -> str:
    who = f"agent '{agent}'" if agent else "this caller"
    return f"ERROR: tool '{name}' is not permitted for {who}."
