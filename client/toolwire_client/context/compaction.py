"""The side exchange that summarises older turns: the request sent to the run's model (never part of the run's
message list), made of those turns as the model last saw them (results as heads or stubs, an older summary)."""

import json

from toolwire_client import texts
from toolwire_shared.messages import AssistantMessage, Message, SystemMessage, ToolResultMessage, UserMessage

SUMMARY_MAX_TOKENS = 1_024
"""The most a summary may be, and at most a quarter of the budget (`summary_cap`)."""


def summary_cap(budget: int) -> int:
    return max(64, min(SUMMARY_MAX_TOKENS, budget // 4))


def line_of(message: Message) -> str:
    """One message of the transcript a summary is written from."""
    if isinstance(message, ToolResultMessage):
        error = " (error)" if message.is_error else ""
        return f"[result of {message.name}, call_id {message.call_id}{error}]: {message.content}"
    if isinstance(message, AssistantMessage):
        calls = "".join(
            f"\n  called {call.name}({json.dumps(call.arguments)}), call_id {call.id}" for call in message.tool_calls
        )
        return f"[assistant]: {message.text}{calls}"
    if isinstance(message, SystemMessage):
        return f"[system]: {message.content}"
    return f"[user]: {message.content}"


def compact_request(turns: list[Message]) -> list[Message]:
    """The request: the summariser's instructions and the turns, as one transcript."""
    transcript = "\n".join(line_of(message) for message in turns)
    return [SystemMessage(content=texts.COMPACT_SYSTEM), UserMessage(content=texts.compact_request(transcript))]
