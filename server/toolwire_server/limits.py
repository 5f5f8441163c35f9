"""Server-wide limits: how much a result (or an error) may carry, how large a request may be."""

from dataclasses import dataclass

DEFAULT_MAX_RESULT_CHARS = 20_000
DEFAULT_MAX_BODY_BYTES = 1_000_000
DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class ServerLimits:
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    """Text of a tool result or error beyond this is cut, with a note telling the model how to ask for less; the
    caller's text quoted in the server's log is cut to the same length."""
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    """HTTP request bodies over this are refused with 413."""
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    """stdio lines over this are skipped (never held whole) and answered with a JSON-RPC error."""
