"""Token usage as the providers report it, normalised so that input_tokens includes cached tokens."""

from dataclasses import dataclass


@dataclass(slots=True, kw_only=True)
class Usage:
    """A plain record (a run keeps two a step): validated where a run is loaded, not each time one is made."""

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
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cache_write_1h_tokens=self.cache_write_1h_tokens + other.cache_write_1h_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )

    def __sub__(self, other: "Usage") -> "Usage":
        """What was added since `other` (a sub-agent's totals now minus what its parent already counted)."""
        return Usage(
            input_tokens=self.input_tokens - other.input_tokens,
            output_tokens=self.output_tokens - other.output_tokens,
            cache_read_tokens=self.cache_read_tokens - other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens - other.cache_write_tokens,
            cache_write_1h_tokens=self.cache_write_1h_tokens - other.cache_write_1h_tokens,
            reasoning_tokens=self.reasoning_tokens - other.reasoning_tokens,
        )
