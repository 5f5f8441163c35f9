"""A rough token estimate (about four characters a token) for budgets before the real count is known."""

import json

from toolwire_shared.messages import Message, dump_messages
from toolwire_shared.tools import ToolSpec


def estimate_text(text: str) -> int:
    return max(1, len(text) // 4)


MEDIA_PART_TOKENS = 1_600
"""A tool result's image (or audio clip) at most, about: providers bill an image by its pixels (Anthropic scales one
to about 1.15 megapixels, some 1,600 tokens), never by its base64 length, so the parts are not counted as text."""


def estimate_prompt(messages: list[Message], tools: list[ToolSpec]) -> int:
    """What the next request will cost: the whole message list and every tool definition are sent again."""
    specs = [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]
    dumped = dump_messages(messages)
    parts = sum(len(message.pop("media", ())) for message in dumped)
    return estimate_text(json.dumps(dumped) + json.dumps(specs)) + parts * MEDIA_PART_TOKENS
