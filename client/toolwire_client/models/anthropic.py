"""Anthropic Messages API adapter: neutral messages to `/v1/messages` and the reply back to an AssistantMessage."""

import json
from dataclasses import replace
from typing import Any, Unpack

from toolwire_client.models.anthropic_cache import PromptCache, place_breakpoints
from toolwire_client.models.anthropic_stream import MessageAssembler
from toolwire_client.models.base import ModelReply
from toolwire_client.models.http import HttpModel
from toolwire_client.models.media import NO_MEDIA, anthropic_content
from toolwire_client.models.options import HttpOptions
from toolwire_shared.media import MediaKind
from toolwire_shared.messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolResultMessage
from toolwire_shared.tools import ToolSpec
from toolwire_shared.usage import Usage

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 4096
DEFAULT_VERSION = "2026-10-21"
"""Under this version temperature/top_p/top_k get a 400 even at their defaults, so none are sent."""


class AnthropicModel(HttpModel):
    provider = "anthropic"
    native_tool_search = True
    """Searches deferred tools itself (its tool search tool): a run with tool search on defers to it."""
    path = "/v1/messages"
    stream_assembler = MessageAssembler
    default_base_url = DEFAULT_BASE_URL
    key_env = "ANTHROPIC_API_KEY"
    base_url_env = "ANTHROPIC_BASE_URL"
    takes_media = frozenset[MediaKind]({"image"})

    def __init__(
        self,
        model: str,
        *,
        version: str = DEFAULT_VERSION,
        prompt_cache: PromptCache = "5m",
        **options: Unpack[HttpOptions],
    ) -> None:
        """`prompt_cache`: the TTL of the cache breakpoints ("off", "5m", "1h"; see anthropic_cache). `max_tokens`
        defaults to 4096: the Messages API needs one on every request."""
        super().__init__(model, **options)
        self.version = version
        self.prompt_cache: PromptCache = prompt_cache
        self.context_management: dict[str, Any] | None = None
        """Sent as every request's `context_management` (the provider's context editing: context/native.py)."""

    def _headers(self) -> dict[str, str]:
        headers = {"anthropic-version": self.version, "content-type": "application/json"}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    def wire_body(
        self, messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None
    ) -> dict[str, Any]:
        most = self.max_tokens or DEFAULT_MAX_TOKENS
        limit = most if max_output_tokens is None else min(most, max_output_tokens)
        body: dict[str, Any] = {"model": self.model, "max_tokens": limit}
        system = [m.content for m in messages if isinstance(m, SystemMessage)]
        if system:
            body["system"] = [{"type": "text", "text": text} for text in system]
        if tools:
            body["tools"] = wire_tools(tools)
            body["tool_choice"] = wire_tool_choice(self.tool_choice)
        body["messages"] = wire_messages(messages, self.media_kinds)
        place_breakpoints(body, self.prompt_cache)
        if self.context_management is not None:
            body["context_management"] = self.context_management
        return body

    def body_headers(self, body: dict[str, Any]) -> dict[str, str]:
        """The betas of what the request uses: the tool search tool, context editing, a compaction block."""
        betas = [beta for beta, uses in _BETAS if uses(body)]
        return {"anthropic-beta": ",".join(betas)} if betas else {}

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None = None
    ) -> ModelReply:
        posted = await self._send(self.request_body(messages, tools, max_output_tokens))
        content = posted.data.get("content")
        if not isinstance(content, list):
            raise self._unreadable("no content list in the message")
        reply = posted.reply(
            parse_content(content), parse_usage(posted.data.get("usage")), posted.data.get("stop_reason")
        )
        found = found_tools(content)
        edits = applied_edits(posted.data)
        return replace(reply, found_tools=found, applied_edits=edits) if found or edits else reply


TOOL_SEARCH_TYPE = "tool_search_tool_bm25_20251119"
TOOL_SEARCH_NAME = "tool_search_tool_bm25"
TOOL_SEARCH_BETA = "advanced-tool-use-2025-11-20"


CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
COMPACTION_BETA = "compact-2026-09-04"
"""Compaction on demand: on the request that asks for a summary and on every request that carries its block."""


def _carries_compaction(body: dict[str, Any]) -> bool:
    if "compaction" in body:
        return True
    first = body["messages"][0]["content"] if body.get("messages") else None
    return isinstance(first, list) and any(block.get("type") == "compaction" for block in first)


_BETAS = (
    (TOOL_SEARCH_BETA, lambda body: any(tool.get("type") == TOOL_SEARCH_TYPE for tool in body.get("tools", ()))),
    (CONTEXT_MANAGEMENT_BETA, lambda body: "context_management" in body),
    (COMPACTION_BETA, _carries_compaction),
)


def applied_edits(data: dict[str, Any]) -> list[dict[str, Any]]:
    """What the provider's context editing cleared before the model read the request (`context_management`)."""
    managed = data.get("context_management")
    edits = managed.get("applied_edits") if isinstance(managed, dict) else None
    return [edit for edit in edits if isinstance(edit, dict)] if isinstance(edits, list) else []


def wire_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """The `tools` array. Tools offered `deferred` (tools/tool_search.py, native) go first with `defer_loading`,
    then the others, then Anthropic's BM25 tool search tool, which finds the deferred ones: the prompt cache's
    breakpoint goes on the last tool, which is never a deferred one."""
    deferred = [{**_wire_tool(t), "defer_loading": True} for t in tools if t.deferred]
    loaded = [_wire_tool(t) for t in tools if not t.deferred]
    search = [{"type": TOOL_SEARCH_TYPE, "name": TOOL_SEARCH_NAME}] if deferred else []
    return [*deferred, *loaded, *search]


def _wire_tool(tool: ToolSpec) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}


def found_tools(content: list[Any]) -> list[str]:
    """The tools the provider's tool search loaded in this reply: the `tool_reference`s of its results."""
    found: list[str] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_search_tool_result":
            result = block.get("content")
            references = result.get("tool_references") if isinstance(result, dict) else None
            for reference in references if isinstance(references, list) else ():
                if isinstance(reference, dict) and isinstance(reference.get("tool_name"), str):
                    found.append(reference["tool_name"])
    return found


def wire_tool_choice(choice: str | dict[str, Any] | None) -> dict[str, Any]:
    """The neutral choice ("auto", "required", "none", a tool name) as Anthropic spells it."""
    if isinstance(choice, dict):
        return choice
    if choice in (None, "auto", "none"):
        return {"type": choice or "auto"}
    if choice == "required":
        return {"type": "any"}
    return {"type": "tool", "name": choice}


def wire_messages(messages: list[Message], media: frozenset[MediaKind] = NO_MEDIA) -> list[dict[str, Any]]:
    """The `messages` array: every run of tool results becomes ONE user message, tool_result blocks first; a
    result's images (of the `media` kinds) go in its tool_result block."""
    out: list[dict[str, Any]] = []
    pending_results: list[dict[str, Any]] = []

    def flush(extra_text: str | None = None) -> None:
        if pending_results:
            blocks = list(pending_results)
            if extra_text:
                blocks.append({"type": "text", "text": extra_text})
            out.append({"role": "user", "content": blocks})
            pending_results.clear()

    for message in messages:
        if isinstance(message, ToolResultMessage):
            pending_results.append(tool_result_block(message, media))
        elif isinstance(message, SystemMessage):
            continue
        elif message.role == "user":
            if pending_results:
                flush(message.content)  # text may follow the results in the same user message, never precede them
            else:
                out.append({"role": "user", "content": message.content})
        else:
            flush()
            out.append({"role": "assistant", "content": assistant_content(message)})
    flush()
    return out


def tool_result_block(message: ToolResultMessage, media: frozenset[MediaKind] = NO_MEDIA) -> dict[str, Any]:
    content = anthropic_content(message, media)
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.call_id, "content": content}
    if message.is_error:
        block["is_error"] = True
    return block


def assistant_content(message: AssistantMessage) -> list[dict[str, Any]]:
    """Our own earlier turn echoed unchanged (thinking blocks and signatures must round-trip), else rebuilt."""
    if message.provider == "anthropic" and message.provider_content is not None:
        return message.provider_content
    blocks: list[dict[str, Any]] = []
    if message.text:
        blocks.append({"type": "text", "text": message.text})
    blocks.extend({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in message.tool_calls)
    return blocks


def parse_content(content: list[Any]) -> AssistantMessage:
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            calls.append(parse_tool_use(block))
    return AssistantMessage(
        text="\n".join(t for t in texts if t),
        tool_calls=calls,
        provider="anthropic",
        provider_content=[b for b in content if isinstance(b, dict)],
    )


def parse_tool_use(block: dict[str, Any]) -> ToolCall:
    call_input = block.get("input", {})
    call_id, name = str(block.get("id", "")), str(block.get("name", ""))
    if isinstance(call_input, dict):
        return ToolCall(id=call_id, name=name, arguments=call_input)
    if isinstance(call_input, str):  # a streamed input whose JSON did not parse
        return ToolCall(id=call_id, name=name, raw_arguments=call_input, parse_error="input is not valid JSON")
    problem = f"input is a {type(call_input).__name__}"
    return ToolCall(id=call_id, name=name, raw_arguments=json.dumps(call_input), parse_error=problem)


def parse_usage(usage: Any) -> Usage:
    """input_tokens counts only the uncached tail, so the three input fields are summed (nulls count as 0)."""
    if not isinstance(usage, dict):
        return Usage()
    fresh = usage.get("input_tokens") or 0
    write = usage.get("cache_creation_input_tokens") or 0
    read = usage.get("cache_read_input_tokens") or 0
    by_ttl = usage.get("cache_creation")
    written_1h = (by_ttl.get("ephemeral_1h_input_tokens") or 0) if isinstance(by_ttl, dict) else 0
    return Usage(
        input_tokens=fresh + write + read,
        output_tokens=usage.get("output_tokens") or 0,
        cache_read_tokens=read,
        cache_write_tokens=write,
        cache_write_1h_tokens=written_1h,
    )
