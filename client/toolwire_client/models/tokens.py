"""A rough token estimate (about four characters a token) for budgets before the real count is known."""

import json

from toolwire_shared.messages import Message, dump_messages
from toolwire_shared.tools import ToolSpec


def estimate_text(text: str) -> int:
    return max(1, len(text) // 4)


def estimate_prompt(messages: list[Message], tools: list[ToolSpec]) -> int:
    """What the next request will cost: the whole message list and every tool definition are sent again."""
    specs = [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]
    return estimate_text(json.dumps(dump_messages(messages)) + json.dumps(specs))
