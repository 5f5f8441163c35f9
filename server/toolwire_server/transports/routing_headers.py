"""HTTP: the routing headers a request carries (`Mcp-Method`, `Mcp-Name`, SEP-2243) must say what its body says, in
either protocol era. A gateway, a firewall or a load balancer may route or allow on those headers alone: a request
whose header names `echo` while its body calls `drop_table` would pass them as the one and run as the other.

The rule is the SDK's (`mcp.shared.inbound`: which body field `Mcp-Name` mirrors, how a base64 value decodes). A
2026-07-28 request gets it from the SDK's own ladder (the headers are required there; transports/fast_http.py runs the
same ladder), with the `Mcp-Param-*` headers checked against the tool's schema. A handshake-era request (which need
not send them) is checked here when it does send one: a mismatch is refused, 400 with error -32020, before anything
runs. Sits inside `Gate` (the body is read), outside the fast path and the SDK."""

import logging
from typing import Any

import pydantic_core
from mcp.shared.inbound import (
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    NAME_BEARING_METHODS,
    decode_header_value,
)
from mcp_types.jsonrpc import HEADER_MISMATCH
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Receive, Scope, Send

from toolwire_server.transports.bodies import put_back, replay
from toolwire_server.transports.responses import send_json

log = logging.getLogger("toolwire.server")

_CHECKED = (MCP_METHOD_HEADER.encode(), MCP_NAME_HEADER.encode())
_VERSION = MCP_PROTOCOL_VERSION_HEADER.encode()
_ROUTING = (*_CHECKED, _VERSION)


def mismatch(body: Any, headers: dict[str, str]) -> str | None:
    """Why the routing headers present in `headers` (lowercase names) disagree with the JSON-RPC `body`, or None."""
    if not isinstance(body, dict) or not isinstance(method := body.get("method"), str):
        return None  # not a request (a response, a batch, junk): the SDK answers it
    if MCP_METHOD_HEADER in headers and headers[MCP_METHOD_HEADER].strip() != method:
        return f"the {MCP_METHOD_HEADER} header does not match the request body's method"
    name_key = NAME_BEARING_METHODS.get(method)
    params = body.get("params")
    named = params.get(name_key) if name_key is not None and isinstance(params, dict) else None
    if (
        MCP_NAME_HEADER in headers
        and named is not None
        and decode_header_value(headers[MCP_NAME_HEADER].strip()) != named
    ):
        return f"the {MCP_NAME_HEADER} header does not match the request body's {name_key!r} parameter"
    return None


class RoutingHeaders:
    def __init__(self, app: ASGIApp, mcp_path: str) -> None:
        self.app, self.mcp_path = app, mcp_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._handshake_era_with_headers(scope):
            await self.app(scope, receive, send)
            return
        first = await receive()  # Gate read the whole body: it comes back as one message
        whole = first["type"] == "http.request" and not first.get("more_body")
        body = first.get("body", b"") if whole else None
        receive = replay(body, receive) if body is not None else put_back(first, receive)
        try:
            message = pydantic_core.from_json(body) if body else None
        except ValueError:
            message = None  # the SDK answers -32700
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"] if k in _CHECKED}
        why = mismatch(message, headers)
        if why is None:
            await self.app(scope, receive, send)
            return
        request_id = message.get("id") if isinstance(message, dict) else None
        log.warning("400 for POST %s: %s", self.mcp_path, why)
        error = {"code": HEADER_MISMATCH, "message": f"{why}: send the headers the body says, or none"}
        await send_json(send, 400, {"jsonrpc": "2.0", "id": request_id, "error": error})

    def _handshake_era_with_headers(self, scope: Scope) -> bool:
        """A POST to the MCP path, not at a 2026-07-28 version (the SDK's ladder checks those), with a routing
        header."""
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"].rstrip("/") != self.mcp_path:
            return False
        names = {k: v for k, v in scope["headers"] if k in _ROUTING}
        version = names.get(_VERSION, b"").decode("latin-1").strip()
        return version not in MODERN_PROTOCOL_VERSIONS and any(k in names for k in _CHECKED)
