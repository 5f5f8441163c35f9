"""OpenAI Chat Completions adapter, also for OpenAI-compatible local servers (Ollama, llama.cpp, vLLM, LM Studio).

Local servers bend the format: arguments as objects instead of JSON strings, tool calls without ids, and a 400/500
for `content: null` on the echoed assistant turn. Each is normalised here so the loop never sees the difference.
"""

import json
import logging
from typing import Any, Unpack

from toolwire_client.models.base import ModelCallFailed, ModelReply
from toolwire_client.models.http import HttpModel
from toolwire_client.models.json_fields import member
from toolwire_client.models.media import chat_followup
from toolwire_client.models.openai_chat_stream import ChatAssembler
from toolwire_client.models.options import HttpOptions
from toolwire_shared.ids import new_call_id
from toolwire_shared.media import MediaKind
from toolwire_shared.messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolResultMessage
from toolwire_shared.tools import ToolSpec
from toolwire_shared.usage import Usage

DEFAULT_BASE_URL = "https://api.openai.com/v1"

log = logging.getLogger("toolwire.client.models")


class OpenAIChatModel(HttpModel):
    provider = "openai"
    path = "/chat/completions"
    stream_assembler = ChatAssembler
    default_base_url = DEFAULT_BASE_URL
    key_env = "OPENAI_API_KEY"
    base_url_env = "OPENAI_BASE_URL"
    takes_media = frozenset[MediaKind]({"image", "audio"})

    def __init__(self, model: str, *, send_null_content: bool | None = None, **options: Unpack[HttpOptions]) -> None:
        """`send_null_content`: whether an assistant turn with tool calls and no text is echoed with `content: null`
        (OpenAI's own form) or `""`. Unset, it is null for api.openai.com and "" for any other base URL, because
        local servers (llama-cpp-python, some proxies) refuse null, and "" is accepted everywhere we know of.
        `tool_choice` is sent whenever tools are offered, "auto" when unset (see `wire_tool_choice`).
        `stream` asks for `include_usage`, so the last chunk carries the usage."""
        super().__init__(model, **options)
        if send_null_content is None:
            send_null_content = self.base_url == DEFAULT_BASE_URL
        self.empty_content: str | None = None if send_null_content else ""

    def wire_body(
        self, messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": self.wire_messages(messages)}
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.input_schema,
                        "strict": False,
                    },
                }
                for t in tools
            ]
            body["parallel_tool_calls"] = True  # llama.cpp turns parallel calls off unless asked
            choice = wire_tool_choice(self.tool_choice)
            if choice != "auto" or self.base_url not in REFUSES_EXPLICIT_AUTO:
                body["tool_choice"] = choice
        limit = _smallest(self.max_tokens, max_output_tokens)
        if limit is not None:
            body["max_completion_tokens"] = limit
        if self.stream:
            body["stream_options"] = {"include_usage": True}
        return body

    def wire_messages(self, messages: list[Message]) -> list[dict[str, Any]]:
        """One wire message per neutral message: one `role: tool` message per tool_call_id; a turn's images and
        audio (which a tool message cannot hold) in one user message after its last tool message."""
        out: list[dict[str, Any]] = []
        turn: list[ToolResultMessage] = []
        for n, m in enumerate(messages):
            if isinstance(m, ToolResultMessage):
                out.append({"role": "tool", "tool_call_id": m.call_id, "content": m.content})
                turn.append(m)
                if n + 1 == len(messages) or not isinstance(messages[n + 1], ToolResultMessage):
                    followup = chat_followup(turn, self.media_kinds)
                    out += [followup] if followup else []
                    turn = []
            elif isinstance(m, SystemMessage):
                out.append({"role": "system", "content": m.content})
            elif isinstance(m, AssistantMessage):
                out.append(self.assistant_echo(m))
            else:
                out.append({"role": "user", "content": m.content})
        return out

    def assistant_echo(self, m: AssistantMessage) -> dict[str, Any]:
        echo: dict[str, Any] = {"role": "assistant", "content": m.text or self.empty_content}
        if m.tool_calls:
            echo["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    # the model's own string goes back untouched, even when it was not valid JSON
                    "function": {"name": c.name, "arguments": c.raw_arguments or json.dumps(c.arguments)},
                }
                for c in m.tool_calls
            ]
        return echo

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None = None
    ) -> ModelReply:
        body = self.request_body(messages, tools, max_output_tokens)
        try:
            posted = await self._send(body)
        except ModelCallFailed as exc:
            if not _refused_explicit_auto(exc, body):
                raise
            REFUSES_EXPLICIT_AUTO.add(self.base_url)
            log.warning("%s refused tool_choice 'auto'; leaving it out from now on: %s", self.base_url, exc.reason)
            del body["tool_choice"]
            posted = await self._send(body)
        choices = posted.data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self._unreadable("no choices in the completion")
        choice: dict[str, Any] = choices[0]
        message = choice.get("message")
        if not isinstance(message, dict):
            raise self._unreadable("the first choice has no message")
        return posted.reply(parse_message(message), parse_usage(posted.data.get("usage")), choice.get("finish_reason"))


def wire_tool_choice(choice: str | dict[str, Any] | None) -> str | dict[str, Any]:
    """ "auto" when unset. llama-cpp-python answers a request with tools but no tool_choice as if no tools were
    offered, so the default is sent, not left to the server; a bare tool name forces that tool."""
    if choice is None:
        return "auto"
    if isinstance(choice, dict) or choice in ("auto", "required", "none"):
        return choice
    return {"type": "function", "function": {"name": choice}}


REFUSES_EXPLICIT_AUTO: set[str] = set()
"""Base URLs that answered an explicit `tool_choice: "auto"` with a 400 (vLLM without --enable-auto-tool-choice):
remembered for the process, so only the first call there pays the extra request."""


def _refused_explicit_auto(exc: ModelCallFailed, body: dict[str, Any]) -> bool:
    said = exc.reason.lower()
    return body.get("tool_choice") == "auto" and exc.status == 400 and ("tool_choice" in said or "tool choice" in said)


def parse_message(message: dict[str, Any]) -> AssistantMessage:
    """Tool calls decide whether the model asked for tools; a legacy `function_call` beside them is ignored."""
    text = message.get("content")
    if not isinstance(text, str) or not text:
        refusal = message.get("refusal")
        text = refusal if isinstance(refusal, str) else ""
    raw_calls = message.get("tool_calls") or []
    calls = [parse_tool_call(c) for c in raw_calls if isinstance(c, dict)]
    return AssistantMessage(text=text, tool_calls=calls, provider="openai")


def parse_tool_call(call: dict[str, Any]) -> ToolCall:
    function = member(call, "function")
    return parse_arguments(call.get("id") or new_call_id(), str(function.get("name") or ""), function.get("arguments"))


def parse_arguments(call_id: str, name: str, raw: Any) -> ToolCall:
    """The model's arguments as a ToolCall: a JSON string parsed (kept as raw_arguments), an object taken as it is;
    invalid JSON or a non-object keeps the raw text and sets parse_error, so the call is answered, never run."""
    if raw is None or raw == "":
        return ToolCall(id=call_id, name=name, raw_arguments=raw)
    if isinstance(raw, dict):  # llama.cpp / older Ollama send the object itself
        return ToolCall(id=call_id, name=name, arguments=raw)
    if not isinstance(raw, str):
        return ToolCall(id=call_id, name=name, raw_arguments=json.dumps(raw), parse_error=_not_object(raw))
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as exc:
        return ToolCall(
            id=call_id, name=name, raw_arguments=raw, parse_error=f"invalid JSON: {exc.msg} at character {exc.pos}"
        )
    if not isinstance(parsed, dict):
        return ToolCall(id=call_id, name=name, raw_arguments=raw, parse_error=_not_object(parsed))
    return ToolCall(id=call_id, name=name, arguments=parsed, raw_arguments=raw)


def _not_object(value: Any) -> str:
    kinds = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean"}
    return f"got {kinds.get(type(value), type(value).__name__)} where an object was expected"


def parse_usage(usage: Any, sides: tuple[str, str] = ("prompt", "completion")) -> Usage:
    """OpenAI's usage object. Chat Completions names its two sides prompt/completion, the Responses API input/output;
    the accounting is the same: the input count already includes the cached tokens and the output count the
    reasoning ones, and the `*_tokens_details` only say how many of them were."""
    if not isinstance(usage, dict):
        return Usage()
    given, made = sides
    inputs, outputs = member(usage, f"{given}_tokens_details"), member(usage, f"{made}_tokens_details")
    return Usage(
        input_tokens=usage.get(f"{given}_tokens") or 0,
        output_tokens=usage.get(f"{made}_tokens") or 0,
        cache_read_tokens=inputs.get("cached_tokens") or 0,
        cache_write_tokens=inputs.get("cache_write_tokens") or 0,
        reasoning_tokens=outputs.get("reasoning_tokens") or 0,
    )


def _smallest(*limits: int | None) -> int | None:
    given = [n for n in limits if n is not None]
    return min(given) if given else None
