"""Server-wide limits: how much a result may carry and how large a request body may be."""

from dataclasses import dataclass

DEFAULT_MAX_RESULT_CHARS = 20_000
DEFAULT_MAX_BODY_BYTES = 1_000_000


@dataclass(frozen=True)
class ServerLimits:
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    """Text of a tool result beyond this is cut, with a note telling the model how to ask for less."""
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    """HTTP request bodies over this are refused with 413."""
