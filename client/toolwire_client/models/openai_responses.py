"""OpenAI Responses API adapter: neutral messages to `/v1/responses` items and the output items back.

The output items (reasoning, message, function_call) are kept whole on the AssistantMessage (`provider_content`, as
the Anthropic adapter keeps its blocks) and echoed unchanged as the next request's `input`: reasoning items must
come back as they were, and a function_call keeps its item `id` beside the `call_id` its result is matched by.
"""

import json
import re
from dataclasses import replace
from typing import Any, Unpack

from toolwire_client.models.base import ModelCallFailed, ModelReply
from toolwire_client.models.http import HttpModel
from toolwire_client.models.json_fields import member
from toolwire_client.models.media import NO_MEDIA, responses_output
from toolwire_client.models.openai_chat import DEFAULT_BASE_URL, parse_arguments, parse_usage
from toolwire_client.models.openai_responses_stream import ResponsesAssembler
from toolwire_client.models.openai_tool_search import deferring, echoed, found_tools, searches_natively
from toolwire_client.models.options import HttpOptions
from toolwire_client.models.retry import redact
from toolwire_shared.media import MediaKind
from toolwire_shared.messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolResultMessage
from toolwire_shared.tools import ToolSpec

ITEMS = "openai-responses"
"""AssistantMessage.provider for turns whose provider_content is a list of Responses output items."""

REASONING_MODELS = re.compile(r"^(o\d|gpt-5|codex)", re.IGNORECASE)
"""Model names that return reasoning items; with store false those only round-trip with their encrypted_content."""

INCOMPLETE_REASONS = {"max_output_tokens": "length", "content_filter": "content_filter"}
"""incomplete_details.reason as the finish_reason Chat Completions (and the gen_ai conventions) would give."""


class OpenAIResponsesModel(HttpModel):
    provider = "openai"
    """gen_ai.provider.name: the same provider as Chat Completions, another API of it."""
    path = "/responses"
    stream_assembler = ResponsesAssembler
    spec_prefix = "openai-responses"
    """Its row in the provider table: a config rebuilt from this model gets this adapter, not Chat Completions."""
    default_base_url = DEFAULT_BASE_URL
    key_env = "OPENAI_API_KEY"
    base_url_env = "OPENAI_BASE_URL"
    takes_media = frozenset[MediaKind]({"image"})

    def __init__(
        self,
        model: str,
        *,
        store: bool = False,
        include_reasoning: bool | None = None,
        **options: Unpack[HttpOptions],
    ) -> None:
        """`store`: False by default, so every request is stateless: toolwire's saved message list is the whole state
        and is re-sent as items, never a `previous_response_id` that another process, a resumed run, a replay or a
        switch of provider could not follow (and that expires), and OpenAI keeps nothing of the run.
        `include_reasoning`: ask for `reasoning.encrypted_content`, without which a reasoning item cannot be echoed
        when store is false; unset, asked for reasoning models only (others refuse it).
        `tool_choice`: unset leaves OpenAI's default (auto); "required", "none" or a tool's name are spelled flat."""
        super().__init__(model, **options)
        self.store = store
        if include_reasoning is None:
            include_reasoning = not store and REASONING_MODELS.match(model) is not None
        self.include_reasoning = include_reasoning
        self.native_tool_search = searches_natively(model)
        """gpt-5.4 and later search deferred tools themselves (openai_tool_search.py): tool search defers to them."""

    def wire_body(
        self, messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model}
        system = [m.content for m in messages if isinstance(m, SystemMessage)]
        if system:
            body["instructions"] = "\n\n".join(system)
        body["input"] = wire_input(messages, self.media_kinds)
        if tools:
            functions = [
                {
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                    "strict": False,
                }
                for t in tools
            ]
            body["tools"] = deferring(functions, tools)
            if self.tool_choice is not None:
                body["tool_choice"] = wire_tool_choice(self.tool_choice)
        given = [n for n in (self.max_tokens, max_output_tokens) if n is not None]
        if given:
            body["max_output_tokens"] = min(given)
        body["store"] = self.store
        if self.include_reasoning:
            body["include"] = ["reasoning.encrypted_content"]
        return body

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None = None
    ) -> ModelReply:
        posted = await self._send(self.request_body(messages, tools, max_output_tokens))
        if posted.data.get("status") == "failed":
            raise self._failed(member(posted.data, "error"))
        output = posted.data.get("output")
        if not isinstance(output, list):
            raise self._unreadable("no output list in the response")
        message = parse_output(output)
        finish = finish_reason(posted.data, bool(message.tool_calls))
        reply = posted.reply(message, parse_usage(posted.data.get("usage"), ("input", "output")), finish)
        found = found_tools(output)
        return replace(reply, found_tools=found) if found else reply

    def _failed(self, err: dict[str, Any]) -> ModelCallFailed:
        """`status: failed` comes with a 200 (or as response.failed in a stream); like the SDK, not retried."""
        said = f"{err.get('code') or 'failed'}: {err.get('message') or 'no message'}"
        reason = f"{self.provider} returned a failed response ({said}); not retried"
        return ModelCallFailed(redact(reason, [self._api_key]), status=200)


def wire_tool_choice(choice: str | dict[str, Any]) -> str | dict[str, Any]:
    if isinstance(choice, dict) or choice in ("auto", "required", "none"):
        return choice
    return {"type": "function", "name": choice}


def wire_input(messages: list[Message], media: frozenset[MediaKind] = NO_MEDIA) -> list[dict[str, Any]]:
    """The `input` items: user messages, our earlier output items, one function_call_output per call_id (with its
    images of the `media` kinds as `input_image` parts)."""
    items: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m, SystemMessage):
            continue  # sent as `instructions`
        if isinstance(m, ToolResultMessage):
            items.append({"type": "function_call_output", "call_id": m.call_id, "output": responses_output(m, media)})
        elif isinstance(m, AssistantMessage):
            items.extend(assistant_items(m))
        else:
            items.append({"role": "user", "content": m.content})
    return items


def assistant_items(message: AssistantMessage) -> list[dict[str, Any]]:
    """Our own output items echoed unchanged (reasoning included; tool search items `echoed`); a turn from elsewhere
    rebuilt as items."""
    if message.provider == ITEMS and message.provider_content is not None:
        return [echoed(item) for item in message.provider_content]
    items: list[dict[str, Any]] = []
    if message.text:
        items.append({"role": "assistant", "content": message.text})
    items.extend(function_call_item(c) for c in message.tool_calls)
    return items


def function_call_item(call: ToolCall) -> dict[str, Any]:
    arguments = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments)
    return {"type": "function_call", "call_id": call.id, "name": call.name, "arguments": arguments}


def parse_output(output: list[Any]) -> AssistantMessage:
    texts: list[str] = []
    calls: list[ToolCall] = []
    for item in output:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "message" and isinstance(item.get("content"), list):
            texts.append("".join(_part_text(p) for p in item["content"] if isinstance(p, dict)))
        elif kind == "function_call":
            # the call_id is what the result is matched by; an empty one is renamed by unique_call_ids
            call_id, name = str(item.get("call_id") or ""), str(item.get("name") or "")
            calls.append(parse_arguments(call_id, name, item.get("arguments")))
    return AssistantMessage(
        text="\n".join(t for t in texts if t),
        tool_calls=calls,
        provider=ITEMS,
        provider_content=[i for i in output if isinstance(i, dict)],
    )


def _part_text(part: dict[str, Any]) -> str:
    if part.get("type") == "output_text":
        return str(part.get("text") or "")
    if part.get("type") == "refusal":
        return str(part.get("refusal") or "")
    return ""


def finish_reason(data: dict[str, Any], has_calls: bool) -> str:
    """`status: incomplete` says why in incomplete_details; otherwise whether the model asked for tools."""
    if data.get("status") == "incomplete":
        details = data.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        return INCOMPLETE_REASONS.get(str(reason), str(reason or "incomplete"))
    return "tool_calls" if has_calls else "stop"
