"""Opt-in message content on spans, in the GenAI semconv message format (JSON strings).

Off unless OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is SPAN_ONLY or SPAN_AND_EVENT. Known secrets
(provider API keys and tokens from the environment, `Bearer ...` values, `sk-...` keys) are blanked even then.
"""

import json
import os
import re
from collections.abc import Sequence
from typing import Any, Protocol

from opentelemetry.trace import Span, get_current_span

from toolwire_otel import attributes as semconv
from toolwire_shared.messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolResultMessage, UserMessage
from toolwire_shared.results import ToolResult
from toolwire_shared.tools import ToolSpec

SPAN_MODES = ("SPAN_ONLY", "SPAN_AND_EVENT")
MAX_PART_CHARS = 16_000
"""Longer text parts are cut (the JSON stays valid; Phoenix drops a whole payload that fails its schema)."""
REDACTED = "[REDACTED]"
_SECRET_ENV = re.compile(r"(API_KEY|TOKEN|SECRET|PASSWORD|AUTHORIZATION)", re.IGNORECASE)
_SECRET_PATTERNS = re.compile(
    r"(Bearer\s+[A-Za-z0-9._~+/=-]{8,}|\bsk-[A-Za-z0-9_-]{8,}|\bsk-ant-[A-Za-z0-9_-]{8,})", re.IGNORECASE
)


class _HasMessage(Protocol):
    message: AssistantMessage
    finish_reason: str | None


def capture_enabled() -> bool:
    """Read on every call so a test or a long-lived process can switch it without re-importing."""
    return os.environ.get(semconv.CAPTURE_CONTENT_ENV, "").strip().upper() in SPAN_MODES


def redact(text: str) -> str:
    for name, value in os.environ.items():
        if len(value) >= 8 and _SECRET_ENV.search(name) and value in text:
            text = text.replace(value, REDACTED)
    return _SECRET_PATTERNS.sub(REDACTED, text)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_PART_CHARS else text[:MAX_PART_CHARS] + "...[cut]"


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "content": _cut(text)}


def _tool_call_part(call: ToolCall) -> dict[str, Any]:
    return {"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.arguments}


def message_to_semconv(message: Message) -> dict[str, Any]:
    """One toolwire message as a semconv input message: {"role", "parts": [...]}."""
    if isinstance(message, AssistantMessage):
        parts = ([_text_part(message.text)] if message.text else []) + [_tool_call_part(c) for c in message.tool_calls]
        return {"role": "assistant", "parts": parts}
    if isinstance(message, ToolResultMessage):
        response = {"type": "tool_call_response", "id": message.call_id, "response": _cut(message.content)}
        return {"role": "tool", "parts": [response]}
    if isinstance(message, UserMessage):
        return {"role": "user", "parts": [_text_part(message.content)]}
    return {"role": "system", "parts": [_text_part(message.content)]}


def input_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Everything but system messages, which go to gen_ai.system_instructions."""
    return [message_to_semconv(m) for m in messages if not isinstance(m, SystemMessage)]


def system_instructions(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [_text_part(m.content) for m in messages if isinstance(m, SystemMessage)]


def output_messages(reply: AssistantMessage, finish_reason: str | None) -> list[dict[str, Any]]:
    out = message_to_semconv(reply)
    out["finish_reason"] = finish_reason or ("tool_call" if reply.tool_calls else "stop")
    return [out]


def tool_definitions(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {"type": "function", "name": t.name, "description": t.description, "parameters": t.input_schema} for t in tools
    ]


def _json(value: Any) -> str:
    return redact(json.dumps(value, ensure_ascii=False, default=str))


def record_chat_content(
    span: Span,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec] = (),
    reply: AssistantMessage | _HasMessage | None = None,
    finish_reason: str | None = None,
) -> None:
    """Input (and, once it came, output) of one model call on its chat span; a no-op unless content is opted in.

    `reply` may be the AssistantMessage or the ModelReply (its finish_reason is then used).
    """
    if not span.is_recording() or not capture_enabled():
        return
    span.set_attribute(semconv.GEN_AI_INPUT_MESSAGES, _json(input_messages(messages)))
    system = system_instructions(messages)
    if system:
        span.set_attribute(semconv.GEN_AI_SYSTEM_INSTRUCTIONS, _json(system))
    if tools:
        span.set_attribute(semconv.GEN_AI_TOOL_DEFINITIONS, _json(tool_definitions(tools)))
    if reply is not None:
        message = reply if isinstance(reply, AssistantMessage) else reply.message
        reason = finish_reason if isinstance(reply, AssistantMessage) else (finish_reason or reply.finish_reason)
        span.set_attribute(semconv.GEN_AI_OUTPUT_MESSAGES, _json(output_messages(message, reason)))


def record_agent_content(span: Span, messages: Sequence[Message], final_answer: str | None = None) -> None:
    """The task on the invoke_agent span (and the final answer when there is one); opt-in like the rest."""
    if not span.is_recording() or not capture_enabled():
        return
    task = [message_to_semconv(m) for m in messages if isinstance(m, UserMessage)][:1]
    span.set_attribute(semconv.GEN_AI_INPUT_MESSAGES, _json(task))
    if final_answer is not None:
        answer = [{"role": "assistant", "parts": [_text_part(final_answer)], "finish_reason": "stop"}]
        span.set_attribute(semconv.GEN_AI_OUTPUT_MESSAGES, _json(answer))


def record_plan(steps: Sequence[str], replan: int) -> None:
    """A plan made (plan-and-execute) as an event on the current span, invoke_agent: its size always, its steps
    only when content capture is on."""
    span = get_current_span()
    if not span.is_recording():
        return
    event: dict[str, Any] = {semconv.TOOLWIRE_PLAN_STEPS: len(steps), semconv.TOOLWIRE_PLAN_REPLAN: replan}
    if capture_enabled():
        event[semconv.TOOLWIRE_PLAN_TEXT] = [redact(_cut(step)) for step in steps]
    span.add_event(semconv.TOOLWIRE_PLAN_EVENT, event)


def record_tool_content(span: Span, call: ToolCall, result: ToolResult | None = None) -> None:
    """Arguments (and the result, on success) of one tool call on its execute_tool span; opt-in."""
    if not span.is_recording() or not capture_enabled():
        return
    span.set_attribute(semconv.GEN_AI_TOOL_CALL_ARGUMENTS, _json(call.arguments))
    if result is not None and not result.is_error:
        span.set_attribute(semconv.GEN_AI_TOOL_CALL_RESULT, _json(_cut(result.content)))
