"""Token usage as the providers report it, normalised so that input_tokens includes cached tokens."""

from pydantic import BaseModel, ConfigDict


class Usage(BaseModel):
    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    """All prompt tokens, cached ones included (OpenAI's prompt_tokens; Anthropic's three input fields summed)."""
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0
    """The part of cache_write_tokens written with a 1-hour TTL (Anthropic bills it above a 5-minute write)."""
    reasoning_tokens: int = 0
    """The part of output_tokens spent on hidden reasoning (OpenAI's reasoning_tokens). Billed as output and already
    counted there, so prices never add it again; kept to show where the output went."""

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: "Usage") -> "Usage":
        return _counted(self, other, 1)

    def __sub__(self, other: "Usage") -> "Usage":
        """What was added since `other` (a sub-agent's totals now minus what its parent already counted)."""
        return _counted(self, other, -1)


_COUNTS = tuple(Usage.model_fields)


def _counted(a: Usage, b: Usage, sign: int) -> Usage:
    """a + sign * b, built from the counts that are not 0 only: a run keeps a Usage per step, and pydantic keeps the
    names of the fields given in a set that is ~3x larger past four names."""
    mine, theirs = a.__dict__, b.__dict__
    counts = {}
    for name in _COUNTS:
        total = mine[name] + sign * theirs[name]
        if total:
            counts[name] = total
    return Usage(**counts)
