"""Every call of a turn gets an id of its own before the turn is saved: a provider (often a local server) may send
none, or the same id twice, and approvals, results and resumes must each address exactly one call. The provider's
own content blocks are renamed to match, so what is echoed back to it stays consistent."""

from dataclasses import replace
from typing import Any

from toolwire_shared.ids import new_call_id
from toolwire_shared.messages import AssistantMessage, ToolCall


def unique_call_ids(message: AssistantMessage) -> AssistantMessage:
    given = {call.id for call in message.tool_calls}
    if len(given) == len(message.tool_calls) and all(given):  # every turn but a few: nothing to rename
        return message
    seen: set[str] = set()
    renamed = 0
    calls = []
    for call in message.tool_calls:
        if call.id and call.id not in seen:
            seen.add(call.id)
            calls.append(call)
            continue
        fresh = new_call_id()
        renamed += 1
        seen.add(fresh)
        calls.append(replace(call, id=fresh))
    if not renamed:
        return message
    return replace(message, tool_calls=calls, provider_content=_renamed(message.provider_content, calls))


def _renamed(blocks: list[dict[str, Any]] | None, calls: list[ToolCall]) -> list[dict[str, Any]] | None:
    """The provider's call blocks carry the calls in the same order (that is how the adapter read them): Anthropic
    tool_use blocks by `id`, Responses function_call items by `call_id` (their item `id` stays)."""
    if blocks is None:
        return None
    ids = iter(call.id for call in calls)
    renamed = []
    for b in blocks:
        key = {"tool_use": "id", "function_call": "call_id"}.get(str(b.get("type")))
        renamed.append({**b, key: next(ids, b.get(key))} if key else b)
    return renamed
