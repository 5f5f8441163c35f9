"""The provider-neutral message list: the whole state of a run, what is saved and what is traced.

One ToolResultMessage per tool call; the Anthropic adapter groups the results of one assistant turn into one
user message, the OpenAI adapter sends one `role: tool` message each.
"""

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from toolwire_shared.media import MediaPart
from toolwire_shared.sorted_json import sorted_dumps

_signature_json = sorted_dumps()
"""json.dumps(..., sort_keys=True), its encoder built once (a signature is shown for every call a report lists)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """One call the model asked for. The messages are plain records (slotted dataclasses, made several times a step),
    validated where a run is loaded (`load_messages`, `RunState.model_validate`) and dumped to the same JSON as ever."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    raw_arguments: str | None = None
    """The arguments exactly as the model wrote them, when they came as a JSON string (OpenAI)."""
    parse_error: str | None = None
    """Set when raw_arguments was not a JSON object; the call is then answered with this error, never run."""

    @property
    def signature(self) -> str:
        """The call as the model and the reports show it, `get_order({"order_id": "A123"})`: the same string for the
        same tool and arguments (the repeat guard counts calls by run/state.py's `asked_key`, and shows this)."""
        return f"{self.name}({_signature_json(self.arguments)})"


@dataclass(slots=True, kw_only=True)
class SystemMessage:
    role: Literal["system"] = "system"
    content: str


@dataclass(slots=True, kw_only=True)
class UserMessage:
    role: Literal["user"] = "user"
    content: str


@dataclass(slots=True, kw_only=True)
class AssistantMessage:
    role: Literal["assistant"] = "assistant"
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    provider: str | None = None
    """Which adapter produced provider_content."""
    provider_content: list[dict[str, Any]] | None = None
    """The provider's own content blocks (Anthropic thinking blocks and signatures; Responses output items, reasoning
    included), echoed back unchanged to that provider."""


@dataclass(slots=True, kw_only=True)
class ToolResultMessage:
    role: Literal["tool"] = "tool"
    call_id: str
    name: str
    content: str
    is_error: bool = False
    media: Annotated[list[MediaPart], Field(exclude_if=lambda parts: not parts)] = field(default_factory=list)
    """The result's images and audio (each also described in `content`), sent to a model that takes them: saved with
    the run, so a resume or replay sends the same; left out when empty, so older saved runs load and save unchanged."""


Message = Annotated[SystemMessage | UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="role")]

_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


def dump_messages(messages: list[Message]) -> list[dict[str, Any]]:
    dumped: list[dict[str, Any]] = _MESSAGES.dump_python(messages, mode="json")
    return dumped


def load_messages(data: Any) -> list[Message]:
    return _MESSAGES.validate_python(data)
