"""Anthropic's own context management, as a run with a context budget uses it (context/native.py).

What it relies on, as Anthropic documents it:

- Context editing, https://platform.claude.com/docs/en/build-with-claude/context-editing (beta header
  `context-management-2025-06-27`): the request field `context_management: {"edits": [...]}` with an edit of type
  `clear_tool_uses_20250919` (`trigger` {type "input_tokens", value}, `keep` {type "tool_uses", value},
  `clear_at_least` {type "input_tokens", value}, `exclude_tools` [names], `clear_tool_inputs` bool); the provider
  clears the oldest tool results before the model reads the request, the client keeps its history whole, and the
  response says what it did in `context_management.applied_edits` ({type, cleared_tool_uses,
  cleared_input_tokens}). Field names and types as in the official SDK, anthropic-sdk-python
  src/anthropic/types/beta/beta_clear_tool_uses_20250919_edit_param.py, beta_context_management_response.py,
  beta_clear_tool_uses_20250919_edit_response.py.
- Compaction on demand, https://platform.claude.com/docs/en/build-with-claude/compaction-on-demand (beta header
  `compact-2026-09-04`, on the request that asks and on every request that carries the block): the request
  `"compaction": {"type": "summarize", "instructions": ...}` (not with `context_management` on the same request,
  nor a `tool_choice` of type any or tool) summarises every message it carries and answers with one `compaction`
  block (`content`, the summary as text, and `signature`) and `stop_reason` "compaction"; its tokens are in
  `usage.iterations` (the top-level counts are zero). Later requests send the block exactly as returned, first in
  `messages`, in place of the messages it summarised; turns kept after it follow it unchanged.

Not used: threshold compaction (`compact_20260112`, beta `compact-2026-01-12`): it summarises inside an ordinary
request when the provider decides, which cannot be a step of its own with its own tokens before the request."""

from typing import Any

from toolwire_client import texts
from toolwire_client.models.anthropic import AnthropicModel, parse_usage
from toolwire_client.models.base import Model, ModelCallFailed, ModelReply
from toolwire_client.run.context_view import READ_RESULT
from toolwire_shared.messages import AssistantMessage, Message
from toolwire_shared.tools import ToolSpec
from toolwire_shared.usage import Usage

CLEAR_TOOL_USES = "clear_tool_uses_20250919"
KEEP_TOOL_USES = 3
"""The latest tool uses never cleared (the provider's default)."""


def editing(budget: int) -> dict[str, Any]:
    """The `context_management` every request of the run carries: clear the oldest results once the request passes
    the budget, at least half of it at a time, as toolwire's own clearing does (keeper.STUB_TARGET: the requests
    then grow back over one cached prefix; each clearing breaks it), never
    read_result's own results (reading on would never end), the calls themselves kept (their ids name what
    read_result reads)."""
    edit = {
        "type": CLEAR_TOOL_USES,
        "trigger": {"type": "input_tokens", "value": budget},
        "keep": {"type": "tool_uses", "value": KEEP_TOOL_USES},
        "clear_at_least": {"type": "input_tokens", "value": max(1, budget // 2)},
        "exclude_tools": [READ_RESULT],
        "clear_tool_inputs": False,
    }
    return {"edits": [edit]}


async def compact(model: Model, messages: list[Message], tools: list[ToolSpec], cap: int | None) -> ModelReply:
    """One compaction request: the messages as the model last saw them (the same system prompt and tools), answered
    with the compaction block, which is the compact step's reply (its text the summary)."""
    assert isinstance(model, AnthropicModel)
    posted = await model._post(model.path, compaction_body(model, messages, tools, cap))
    content = posted.data.get("content")
    blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "compaction"] if content else []
    stop = posted.data.get("stop_reason")
    if stop != "compaction" or len(blocks) != 1:
        reason = f"anthropic answered the compaction request with no compaction block (stop_reason {stop!r})"
        raise ModelCallFailed(reason, status=200)
    block = blocks[0]
    message = AssistantMessage(text=str(block.get("content") or ""), provider="anthropic", provider_content=[block])
    return posted.reply(message, iterations_usage(posted.data.get("usage")), "compaction")


def compaction_body(
    model: AnthropicModel, messages: list[Message], tools: list[ToolSpec], cap: int | None
) -> dict[str, Any]:
    """The compaction request: the turn's own body (system prompt, tools, messages), asking for a summary."""
    body = model.wire_body(messages, tools, cap)
    body.pop("context_management", None)
    if body.get("tool_choice", {}).get("type") in ("any", "tool"):
        body.pop("tool_choice")
    body["compaction"] = {"type": "summarize", "instructions": texts.NATIVE_COMPACT_INSTRUCTIONS}
    return body


def iterations_usage(usage: Any) -> Usage:
    """What a compaction request spent: the sum of its `usage.iterations` (the top-level counts leave the
    compaction out), else the top level."""
    iterations = usage.get("iterations") if isinstance(usage, dict) else None
    if not isinstance(iterations, list) or not iterations:
        return parse_usage(usage)
    total = Usage()
    for iteration in iterations:
        total = total + parse_usage(iteration)
    return total
