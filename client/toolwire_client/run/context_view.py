"""What a request is made of: a view of the run's message list, never an edit of it.

The list keeps every message whole (the run store saves it append-only, store/layout.py, and `read_result` reads
from it); before each request the view puts in place of a long result its head and a handle, in place of an old
result a one-line stub, and in place of older turns the summary a compact step wrote. The view is a pure function
of the list, the run's last `ViewMark` (saved on its steps) and the summary that mark names: a resumed run in
another process and a replay compute the very request the model was sent."""

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Annotated, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from toolwire_client import texts
from toolwire_client.models.base import ModelReply
from toolwire_shared.messages import AssistantMessage, Message, SystemMessage, ToolResultMessage, UserMessage

DEFAULT_INLINE_RESULT_CHARS = 4_000
"""A result longer than this reaches the model as its head and a handle (`--inline-result-chars`)."""
READ_RESULT = "read_result"
"""The client's tool that reads a result kept out of the prompt (tools/kept_results.py); its own results are never
cut, or reading on would never end."""


NativeForm = Literal["anthropic", "anthropic-compaction", "openai-responses"]
"""The providers' own context management a run may use: "anthropic" (the provider clears old results and writes the
summary), "anthropic-compaction" and "openai-responses" (toolwire clears, the provider writes the summary)."""
PROVIDER_CLEARS: frozenset[str] = frozenset({"anthropic"})
"""The native forms whose provider clears old tool results itself (the request carries them whole)."""


class ViewMark(BaseModel):
    """Where the view of a run's list stands: every tool result before `stubbed_upto` is a stub, and the messages
    from the end of the opening (system prompt and task) up to `summary_upto` are one summary, the text of step
    `summary_step` (a compact step). Both only move forward, so the requests between two moves share a prefix."""

    model_config = ConfigDict(frozen=True)

    stubbed_upto: int = 0
    summary_upto: int = 0
    summary_step: int | None = None
    native: Annotated[NativeForm | None, Field(exclude_if=lambda native: native is None)] = None
    """The provider's own mechanism kept the budget (context/native.py): "anthropic" cleared the results itself
    (context editing: `stubbed_upto` is only the estimate the decisions were made on, the results are sent whole)
    and wrote the summary; "anthropic-compaction" and "openai-responses" wrote the summary (compaction on demand,
    `responses/compact`). The summary is then the compact step's reply as the provider returned it (a compaction
    block or item), sent back in place of every message it stands for, the task included. None (left out of the
    saved run): toolwire's own form."""


def opening_end(messages: Sequence[Message]) -> int:
    """The index after the run's opening (its system prompt and its task, the first user message): never cut."""
    for n, message in enumerate(messages):
        if isinstance(message, UserMessage):
            return n + 1
    return 0


def first_turn(messages: Sequence[Message]) -> int:
    """The index of the first message after the system prompt: where a provider's own summary goes, which stands
    for the task too (a compaction block must come first in the messages)."""
    for n, message in enumerate(messages):
        if not isinstance(message, SystemMessage):
            return n
    return len(messages)


def turn_starts(messages: Sequence[Message], start: int = 0) -> list[int]:
    """The index of every assistant turn from `start` on: where a view may begin after a summary."""
    return [n for n in range(start, len(messages)) if isinstance(messages[n], AssistantMessage)]


def head_of(message: ToolResultMessage, inline_chars: int) -> ToolResultMessage:
    """A long result as the model reads it: its first `inline_chars` characters and how to read the rest."""
    total = len(message.content)
    content = message.content[:inline_chars] + texts.kept_out(message.call_id, inline_chars, total)
    return replace(message, content=content)


def stub_of(message: ToolResultMessage) -> ToolResultMessage:
    """An old result cleared from the context: one line naming its tool, its size and read_result."""
    line = texts.cleared_result(message.name, message.call_id, len(message.content))
    return ToolResultMessage(call_id=message.call_id, name=message.name, content=line, is_error=message.is_error)


@dataclass
class ViewCache:
    """One run's view parts, made once each: the heads of its long results and the stubs of its cleared ones, by
    message index (the list only grows; a list cut back, as replay's, starts afresh)."""

    scanned: int = 0
    long: list[int] = field(default_factory=list)
    heads: dict[int, ToolResultMessage] = field(default_factory=dict)
    stubs: dict[int, ToolResultMessage] = field(default_factory=dict)
    of: list[Message] | None = None

    def long_results(self, messages: list[Message], inline_chars: int | None) -> list[int]:
        if messages is not self.of or len(messages) < self.scanned:
            self.scanned, self.long, self.heads, self.stubs, self.of = 0, [], {}, {}, messages
        if inline_chars is not None:  # else none is long; read_result's own results are never cut
            for n in range(self.scanned, len(messages)):
                message = messages[n]
                if (
                    isinstance(message, ToolResultMessage)
                    and len(message.content) > inline_chars
                    and message.name != READ_RESULT
                ):
                    self.long.append(n)
        self.scanned = len(messages)
        return self.long

    def head(self, messages: list[Message], n: int, inline_chars: int) -> ToolResultMessage:
        made = self.heads.get(n)
        if made is None:
            message = messages[n]
            assert isinstance(message, ToolResultMessage)
            made = self.heads[n] = head_of(message, inline_chars)
        return made

    def stub(self, messages: list[Message], n: int) -> ToolResultMessage:
        made = self.stubs.get(n)
        if made is None:
            message = messages[n]
            assert isinstance(message, ToolResultMessage)
            made = self.stubs[n] = stub_of(message)
        return made


def summary_message(mark: ViewMark, step: "HasView") -> Message:
    """What stands for the summarised turns: the provider's compacted reply as it came (native), else a user turn
    with toolwire's summary."""
    reply = step.model_reply
    if mark.native is not None and reply is not None:
        return reply.message
    return UserMessage(content=texts.earlier_turns(step.model_text))


def sent_view(
    messages: list[Message],
    mark: ViewMark | None,
    summary: Message | None,
    inline_chars: int | None,
    cache: ViewCache,
) -> list[Message]:
    """The request's messages: `messages` itself when nothing is cut (no copy), else a new list."""
    long = cache.long_results(messages, inline_chars)
    if mark is None and not long:
        return messages
    view = list(messages)
    for n in long:
        view[n] = cache.head(messages, n, inline_chars or 0)
    if mark is None:
        return view
    start = opening_end(messages)
    if mark.native not in PROVIDER_CLEARS:
        for n in range(max(start, mark.summary_upto), min(mark.stubbed_upto, len(messages))):
            if isinstance(messages[n], ToolResultMessage):
                view[n] = cache.stub(messages, n)
    if summary is not None and mark.summary_upto > start:
        view[start if mark.native is None else first_turn(messages) : mark.summary_upto] = [summary]
    return view


def last_mark(steps: Sequence["HasView"]) -> tuple[ViewMark | None, Message | None]:
    """The run's current mark (the last step's that has one) and the summary it names."""
    for step in reversed(steps):
        if step.view is not None:
            mark = step.view
            if mark.summary_step is None:
                return mark, None
            return mark, summary_message(mark, steps[mark.summary_step - 1])
    return None, None


class HasView(Protocol):
    """What last_mark reads of a step (a StepRecord)."""

    @property
    def view(self) -> ViewMark | None: ...

    @property
    def model_text(self) -> str: ...

    @property
    def model_reply(self) -> ModelReply | None: ...
