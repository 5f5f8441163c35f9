"""Server-wide limits: how much a result (or an error) may carry, how large a request may be, how many HTTP
sessions may be open and for how long, how many listen streams an agent may hold, and how long a client may take to
send its request."""

from dataclasses import dataclass

DEFAULT_MAX_RESULT_CHARS = 20_000
DEFAULT_MAX_BODY_BYTES = 1_000_000
DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_SESSIONS = 1000
DEFAULT_MAX_SESSIONS_PER_AGENT = 100
DEFAULT_MAX_LISTEN_STREAMS_PER_AGENT = 16
DEFAULT_SESSION_IDLE_TIMEOUT_S = 600.0
DEFAULT_HEADER_TIMEOUT_S = 10.0
DEFAULT_BODY_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class ServerLimits:
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    """Text of a tool result or error beyond this is cut, with a note telling the model how to ask for less; the
    caller's text quoted in the server's log is cut to the same length."""
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    """HTTP request bodies over this are refused with 413."""
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    """stdio lines over this are skipped (never held whole) and answered with a JSON-RPC error."""
    max_sessions: int = DEFAULT_MAX_SESSIONS
    """HTTP: legacy (Mcp-Session-Id) sessions open at once; at the limit the oldest idle one is closed for a new one,
    and if none is idle the new one is refused (503)."""
    max_sessions_per_agent: int = DEFAULT_MAX_SESSIONS_PER_AGENT
    """HTTP: the same, per agent (token): a client flooding sessions closes its own oldest idle ones, never
    another agent's, and gets 429 when all of its own are busy."""
    max_listen_streams_per_agent: int = DEFAULT_MAX_LISTEN_STREAMS_PER_AGENT
    """`subscriptions/listen` streams one agent may hold open (of the SDK's 1,024 per server); one more is refused
    with an error naming this limit, never another agent's stream."""
    session_idle_timeout_s: float = DEFAULT_SESSION_IDLE_TIMEOUT_S
    """HTTP: a session with no request in flight (no open GET stream either) for this long is closed."""
    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S
    """HTTP: a connection whose request line and headers have not all arrived this long after it opened (or after
    its previous response) is closed."""
    body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S
    """HTTP: a request whose body has not all arrived this long after its headers is answered 408 and closed."""
