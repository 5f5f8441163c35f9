"""What a client's message on an input-required task says: an approval or rejection of a waiting call, or the answer
to a tool's question. Read from the message's parts (a data part, else its text); anything unclear is refused with
the shape a right reply has, and nothing is recorded."""

import re
from dataclasses import dataclass
from typing import Any, Literal

from a2a.types import Message
from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]

from toolwire_shared.elicitation import InputAnswer

DECISION_HELP = 'the text approve, or reject: REASON (or a data part {"decision": "approve"|"reject", "reason": ...})'
ANSWER_HELP = 'a data part {"action": "accept", "content": {...}}, or the text decline or cancel'


_DECISION = re.compile(r"\s*(approve|reject)\b\s*:?\s*(.*?)\s*", re.IGNORECASE | re.DOTALL)


class BadReply(ValueError):
    """The message is not a reply the waiting run can take; the text says what one looks like."""


@dataclass(frozen=True)
class Decision:
    decision: Literal["approve", "reject"]
    reason: str | None
    call_id: str | None
    args_hash: str | None


def text_of(message: Message) -> str:
    return "\n".join(part.text for part in message.parts if part.HasField("text")).strip()


def data_of(message: Message) -> dict[str, Any] | None:
    for part in message.parts:
        if part.HasField("data"):
            value = MessageToDict(part.data)
            if isinstance(value, dict):
                return value
    return None


def decision_in(message: Message) -> Decision:
    data = data_of(message)
    if data is not None:
        said = data.get("decision")
        if said not in ("approve", "reject"):
            raise BadReply(f"not a decision; reply with {DECISION_HELP}")
        reason, call_id, shown = data.get("reason"), data.get("call_id"), data.get("args_hash")
        return Decision(said, _str(reason), _str(call_id), _str(shown))
    text = text_of(message)
    said = _DECISION.fullmatch(text)
    if said is not None and said[1].lower() == "approve" and not said[2]:
        return Decision("approve", None, None, None)
    if said is not None and said[1].lower() == "reject":
        return Decision("reject", said[2] or None, None, None)
    raise BadReply(f"not a decision ({text[:60]!r}); reply with {DECISION_HELP}")


def answer_in(message: Message) -> InputAnswer:
    data = data_of(message)
    if data is not None:
        action = data.get("action")
        if action not in ("accept", "decline", "cancel"):
            raise BadReply(f"not an answer; reply with {ANSWER_HELP}")
        content = data.get("content")
        if content is not None and not isinstance(content, dict):
            raise BadReply(f"an answer's content is an object; reply with {ANSWER_HELP}")
        return InputAnswer(action=action, content=content)
    text = text_of(message).lower()
    if text in ("decline", "cancel"):
        return InputAnswer(action="decline" if text == "decline" else "cancel")
    raise BadReply(f"not an answer ({text[:60]!r}); reply with {ANSWER_HELP}")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
