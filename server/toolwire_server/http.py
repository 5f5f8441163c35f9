"""Streamable HTTP at /mcp under uvicorn: bearer-token access, body-size limit, Host/Origin checks, /healthz.

Only the SDK's default mode is offered (SSE responses, sessions for legacy clients): it is the one where a client
that cancels or goes away really cancels the running tool in both protocol eras. Modern (2026-07-28) requests are
self-contained POSTs, so replicas can stand behind a load balancer without sticky sessions."""

import json
import logging
from typing import Any

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from toolwire_server.access import ALL_TOOLS, Access
from toolwire_server.app import GRANT_SCOPE_KEY, build_server
from toolwire_server.disconnect import CancelOnDisconnect
from toolwire_server.limits import ServerLimits
from toolwire_server.registry import Registry
from toolwire_shared import errors

log = logging.getLogger("toolwire.server")

MCP_PATH = "/mcp"
_LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


async def _json(send: Send, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
    payload = json.dumps(body).encode()
    raw_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw_headers += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": payload})


class Gate:
    """In front of /mcp: refuse over-large bodies (413) and unknown callers (401), with bodies a person can read;
    leave the caller's Grant in the scope for the tool handlers."""

    def __init__(self, app: ASGIApp, access: Access | None, max_body_bytes: int) -> None:
        self.app = app
        self.access = access
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != MCP_PATH:
            await self.app(scope, receive, send)
            return
        headers = {k.decode().lower(): v.decode(errors="replace") for k, v in scope["headers"]}
        declared = headers.get("content-length", "")
        # len() first: int() of a header of thousands of digits raises instead of answering
        if declared.isdigit() and (len(declared) > 18 or int(declared) > self.max_body_bytes):
            await _json(
                send,
                413,
                {
                    "error": "request_too_large",
                    "message": f"request body is {errors.clip(declared, 20)} bytes; this server accepts at most "
                    f"{self.max_body_bytes}. Send smaller arguments.",
                },
            )
            return
        if self.access is None:
            scope[GRANT_SCOPE_KEY] = ALL_TOOLS
        else:
            auth = headers.get("authorization", "")
            scheme, _, token = auth.partition(" ")
            grant = self.access.grant_for_token(token.strip()) if scheme.lower() == "bearer" and token else None
            if grant is None:
                problem = "no bearer token was sent" if not auth else "the bearer token is not recognised"
                log.warning("401 for %s %s: %s", scope["method"], scope["path"], problem)
                await _json(
                    send,
                    401,
                    {
                        "error": "unauthorized",
                        "message": f"{problem}. Send the header 'Authorization: Bearer <token>' with a token "
                        "from this server's access config.",
                    },
                    {"www-authenticate": 'Bearer realm="toolwire"'},
                )
                return
            scope[GRANT_SCOPE_KEY] = grant
        await self.app(scope, receive, send)


def http_app(
    registry: Registry,
    *,
    access: Access | None = None,
    limits: ServerLimits | None = None,
    host: str = "127.0.0.1",
    allowed_hosts: list[str] | None = None,
    allowed_origins: list[str] | None = None,
) -> Starlette:
    """The Starlette app serving `registry` at /mcp (plus GET /healthz)."""
    limits = limits or ServerLimits()
    server = build_server(registry, limits=limits)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok", "server": registry.name, "tools": len(registry)})

    security = None
    if allowed_hosts or allowed_origins or host not in _LOCAL_HOSTS:
        # Bound beyond loopback: only the named hosts/origins pass (DNS-rebinding protection stays on).
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=allowed_hosts or [f"{host}:*"],
            allowed_origins=allowed_origins or [f"http://{host}:*"],
        )
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        max_request_body_size=limits.max_body_bytes,
        transport_security=security,
        host=host,
        custom_starlette_routes=[Route("/healthz", healthz, methods=["GET"])],
    )
    app.add_middleware(CancelOnDisconnect, max_body_bytes=limits.max_body_bytes)
    app.add_middleware(Gate, access=access, max_body_bytes=limits.max_body_bytes)  # outermost
    return app


def serve_http(app: Starlette, *, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Run under uvicorn until interrupted; uvicorn logs to stderr."""
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
