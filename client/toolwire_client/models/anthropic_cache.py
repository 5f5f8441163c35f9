"""Where an Anthropic request marks its cache breakpoints, so each step reads the prefix the step before wrote.

The cached prefix runs tools -> system -> messages. A run's prefix only grows: the tool definitions and the system
prompt are the same on every call, and each step appends one assistant turn and one user turn of tool results.
So four breakpoints (the API's maximum) go on the last tool, the last system block, the user turn the previous
call ended on (where that call wrote the cache: this call reads up to there) and the user turn this call ends on
(written for the next call). A prefix shorter than the model's minimum is simply not cached; nothing fails.
"""

from typing import Any, Literal, get_args

PromptCache = Literal["off", "5m", "1h"]
PROMPT_CACHE_CHOICES: tuple[str, ...] = get_args(PromptCache)


def cache_control(ttl: PromptCache) -> dict[str, str]:
    """5 minutes is the API's default and is left implicit; 1-hour writes cost more (priced as cache_write_1h)."""
    return {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": ttl}


def place_breakpoints(body: dict[str, Any], ttl: PromptCache) -> None:
    """Mark the body in place. Messages and blocks are copied before marking: they may be a saved turn's own
    provider content, echoed by reference, which must stay as the model sent it."""
    if ttl == "off":
        return
    mark = cache_control(ttl)
    if body.get("tools"):
        body["tools"] = [*body["tools"][:-1], {**body["tools"][-1], "cache_control": mark}]
    if body.get("system"):
        body["system"] = [*body["system"][:-1], {**body["system"][-1], "cache_control": mark}]
    messages: list[dict[str, Any]] = list(body["messages"])
    body["messages"] = messages
    user_turns = [i for i, m in enumerate(messages) if m["role"] == "user"]
    for i in user_turns[-2:]:
        messages[i] = _marked(messages[i], mark)


def _marked(message: dict[str, Any], mark: dict[str, str]) -> dict[str, Any]:
    content = message["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    if not blocks:
        return message
    blocks[-1] = {**blocks[-1], "cache_control": mark}
    return {**message, "content": blocks}
