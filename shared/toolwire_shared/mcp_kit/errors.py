"""What went wrong on an MCP connection, told apart: a lost connection or the server's own error answer, and the
first error of a kind inside the exception groups (anyio task groups) and causes it is wrapped in."""

from typing import TypeVar

import anyio
import httpx2
import mcp_types as types
from mcp import MCPError

E = TypeVar("E", bound=BaseException)

LOST = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError, httpx2.TransportError)
"""What a dropped connection looks like from inside a request."""


def closed(exc: MCPError) -> bool:
    """The SDK's own "the connection closed": code -32000 is also the first of the range a server's own errors use
    (JSON-RPC), so a server's `-32000: backend unavailable` is its answer, not a lost connection."""
    return exc.error.code == types.CONNECTION_CLOSED and exc.error.message == "Connection closed" and not exc.error.data


SDK_HTTP_ERROR = "Server returned an error response"
"""mcp.client.streamable_http's message for a POST answered with an error status and no JSON-RPC error."""


def no_answer(exc: MCPError) -> bool:
    """The SDK's stand-in for an HTTP error status that carried no JSON-RPC answer: a proxy that lost the replica
    mid-call (nginx's 502 when it died, 504 when it stalled past `proxy_read_timeout`), or a server that failed before
    it could answer. The call may have run: its outcome is unknown, never a tool's own failure (issue 38)."""
    error = exc.error
    return error.code == types.INTERNAL_ERROR and error.message == SDK_HTTP_ERROR and not error.data


def first(exc: BaseException, kind: type[E]) -> E | None:
    """The first `kind` in an exception, the groups it is in or the errors that caused it."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, kind):
            return current
        todo += list(getattr(current, "exceptions", ()))
        todo += [e for e in (current.__cause__, current.__context__) if e is not None]
    return None


def innermost(exc: BaseException) -> BaseException:
    """The first leaf of an exception group (a task group wraps a connection's error in one)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def why(exc: BaseException) -> str:
    """The innermost readable reason of an exception: `OSError: ...`, or its type alone when it says nothing."""
    exc = innermost(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def leaves(exc: BaseException) -> list[BaseException]:
    """Every leaf of an exception group (the exception itself when it is none)."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
    return [exc]
