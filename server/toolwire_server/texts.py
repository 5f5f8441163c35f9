"""The tool server's own texts, for whoever is at the other end of a connection: a failure of a prompt, resource,
completion or a tool's worker, a tool whose output cannot be described, a cut result; a peer that broke the protocol
(JSON-RPC, sessions, listen streams); a request whose Host, Origin or bearer token it refuses. The client never
writes these; the tool-call failure texts both sides write are in toolwire_shared.errors."""

import json
from collections.abc import Iterable
from typing import Any

from toolwire_shared.errors import QUOTE_CHARS, clip

# What a tool, prompt, resource or completion on this server answers when it fails (the model or a person reads it).


def undescribable_output(tool: str, annotation: str, problem: str) -> str:
    return (
        f"tool '{tool}': its return annotation {annotation} cannot be made into an output schema ({problem}). "
        "Return a pydantic model, a TypedDict (from typing_extensions below Python 3.12), a dataclass, "
        "or a list/dict of them; or annotate it `-> Any` for no structured output."
    )


def bad_prompt_arguments(name: str, problems: list[str], example: dict[str, Any]) -> str:
    return (
        f"bad arguments for prompt '{name}': {'; '.join(problems)}. "
        f"Prompt arguments are strings; a correct prompts/get looks like {json.dumps(example)}."
    )


def prompt_failed(name: str, message: str) -> str:
    return f"prompt '{name}' failed: {message}"


def bad_resource_uri(uri: str, problems: list[str]) -> str:
    return f"bad resource URI '{clip(uri, QUOTE_CHARS)}': {'; '.join(problems)}."


def resource_failed(uri: str, message: str) -> str:
    return f"reading resource '{clip(uri, QUOTE_CHARS)}' failed: {message}"


def template_mismatch(template: str, variables: Iterable[str], params: Iterable[str]) -> str:
    return (
        f"resource template '{template}' has the variables {sorted(variables)}, but its function takes "
        f"{sorted(params)}: give the function exactly one parameter per variable, e.g. "
        "@registry.resource_template('orders://{order_id}') def order(order_id: str) -> str"
    )


def unknown_completion(kind: str, name: str, known: Iterable[str]) -> str:
    listing = ", ".join(sorted(known)) or "(none)"
    return f"nothing to complete: no {kind} '{clip(name, QUOTE_CHARS)}' on this server (known: {listing})."


def completion_failed(argument: str, message: str) -> str:
    return f"completing '{clip(argument, QUOTE_CHARS)}' failed: {message}"


def worker_lost(exitcode: int | None) -> str:
    return (
        f"its worker process ended during the call (exit code {exitcode}), so it may have done part of its work. "
        "Check its effect before repeating it."
    )


def truncated_note(kept: int, total: int) -> str:
    return (
        f"\n[toolwire: result cut to {kept} of {total} characters. "
        "Ask for less: narrow the query, filter, or request one item at a time.]"
    )


# What the server answers to a peer that broke the protocol (a person reads these, through the client's error).


def parse_error(problem: str) -> str:
    return f"Parse error: the line is not JSON ({problem}). Send one JSON-RPC message per line, as UTF-8 JSON."


INVALID_REQUEST = (
    'Invalid Request: the line is JSON but not a JSON-RPC 2.0 message (an object with "jsonrpc": "2.0", a '
    '"method", and an "id" for a request).'
)


def line_too_long(size: int, limit: int) -> str:
    return (
        f"Request too large: a line of {size} bytes; this server reads at most {limit} bytes per line "
        "(--max-line-bytes). The line was skipped; send smaller arguments."
    )


def not_initialized(method: str) -> str:
    return (
        f"Server not initialized: '{clip(method, QUOTE_CHARS)}' came before the initialize handshake. Send "
        "'initialize' (then 'notifications/initialized') first, or the 2026-07-28 per-request '_meta' envelope."
    )


def body_timeout(seconds: float) -> str:
    return (
        f"the request body did not arrive within {seconds:g} s of its headers; the connection is closed. "
        "Send the whole body at once."
    )


SESSION_NOT_YOURS = (
    "this Mcp-Session-Id belongs to a session another agent opened; a session is bound to the token that "
    "opened it. Open your own session (initialize) with your token."
)


def _agent_at_cap(agent: str, limit: int, held: str) -> str:
    """How a refusal at a per-agent cap starts: what the agent holds, and that it is all one agent may hold."""
    return f"agent '{agent}' has {limit} {held}; this server allows {limit} per agent"


def too_many_sessions(agent: str, limit: int) -> str:
    at_cap = _agent_at_cap(agent, limit, "sessions open and none of them is idle")
    return f"{at_cap}. Close a session (HTTP DELETE with its Mcp-Session-Id) or reuse one."


def too_many_watched(agent: str, upstream: str, limit: int) -> str:
    return (
        f"agent '{agent}' is subscribed to {limit} resources of upstream {upstream}, as many as one agent may be; "
        "read the ones you need instead of subscribing to more."
    )


def all_watched(upstream: str, limit: int) -> str:
    return f"upstream {upstream}: {limit} of its resources are subscribed to already, as many as it may have"


def too_many_listens(agent: str, limit: int) -> str:
    at_cap = _agent_at_cap(agent, limit, "subscriptions/listen streams open")
    return (
        f"{at_cap} (toolwire serve --max-listen-streams-per-agent). Close one, or listen for several things on one "
        "stream."
    )


def server_full(limit: int) -> str:
    return f"this server has {limit} sessions open and none of them is idle; try again later."


def sessions_off(workers: int) -> str:
    return (
        f"this tool server runs {workers} processes on one port, so it serves only the stateless 2026-07-28 "
        "protocol: a legacy session (initialize, then Mcp-Session-Id) would not find its process again. Connect "
        "with a 2026-07-28 client (the MCP SDK's default mode), or use replicas on their own ports behind a proxy "
        "that routes sessions (toolwire's deploy/nginx.conf)."
    )


# What the HTTP Gate answers a caller it does not let in (401/403/503 bodies; the short texts also go into
# WWW-Authenticate's error_description).

NO_TOKEN = "no bearer token was sent"
TOKEN_NOT_RECOGNISED = "the bearer token is not recognised"


def unauthorized(problem: str, *, issuer: str | None = None, resource: str | None = None, metadata: str = "") -> str:
    how = "a token from this server's access config"
    if issuer:
        how += f", or an OAuth access token from {issuer} for the resource {resource} (how to get one: {metadata})"
    return f"{problem}. Send the header 'Authorization: Bearer <token>' with {how}."


# What a call a limit refused answers (policy/guard.py): the tool, the limit, the agent, and when to try again.

_LIMIT_UNITS = {"per_minute": "{} per minute", "per_day": "{} per day", "in_flight": "{} in flight at once"}


def limited(tool: str, agent: str, reason: str, amount: float, wait_s: float | None) -> str:
    when = "when one of them finishes" if wait_s is None else f"in {_duration(wait_s)}"
    calls = "call" if amount == 1 else "calls"
    return f"{tool}: {amount:g} {_LIMIT_UNITS[reason].format(calls)} for agent {agent}; next allowed {when}"


def limits_unavailable(tool: str) -> str:
    return f"{tool}: not run: this server cannot reach the store its limits are counted in; try again later"


def requests_limited(agent: str, per_minute: float, wait_s: float) -> str:
    return f"agent {agent}: {per_minute:g} requests per minute; next allowed in {_duration(wait_s)}"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{max(seconds, 0.1):.1f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"
