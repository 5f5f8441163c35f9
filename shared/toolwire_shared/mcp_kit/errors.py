"""What went wrong on an MCP connection, told apart: a lost connection or the server's own error answer, and the
first error of a kind inside the exception groups (anyio task groups) and causes it is wrapped in."""

import anyio
import httpx2
import mcp_types as types
from mcp import MCPError

from toolwire_shared.mcp_kit.groups import first as first
from toolwire_shared.mcp_kit.groups import innermost as innermost
from toolwire_shared.mcp_kit.groups import leaves as leaves
from toolwire_shared.mcp_kit.groups import why as why

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
