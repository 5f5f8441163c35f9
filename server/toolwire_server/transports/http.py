"""Streamable HTTP at /mcp under uvicorn: Host/Origin checks on every request (DNS rebinding: see host_origin.py),
bearer-token access (static tokens, and OAuth access tokens: see oauth.py), body-size limit and read deadlines
(headers and body), guarded sessions (bound to their agent, capped per agent and in all), /healthz.

Only the SDK's default mode is offered (SSE responses, sessions for legacy clients): it is the one where a client
that cancels or goes away really cancels the running tool in both protocol eras. Modern (2026-07-28) requests are
self-contained POSTs, so replicas can stand behind a load balancer without sticky sessions."""

import errno
import logging
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import uvicorn
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from toolwire_otel.setup import flush_installed
from toolwire_server import texts
from toolwire_server.app import GRANT_SCOPE_KEY, build_server
from toolwire_server.auth import oauth
from toolwire_server.auth.access import ALL_TOOLS, Access, Grant
from toolwire_server.auth.oauth import GrantVerifier, Refusal
from toolwire_server.limits import ServerLimits
from toolwire_server.tools.registry import Registry
from toolwire_server.transports import fast_path
from toolwire_server.transports.bodies import read_body, replay
from toolwire_server.transports.connection import connection_of
from toolwire_server.transports.disconnect import CancelOnDisconnect
from toolwire_server.transports.fast_http import FastHttpCalls
from toolwire_server.transports.fast_path import Answerer
from toolwire_server.transports.host_origin import HostOriginCheck, HostOriginRule
from toolwire_server.transports.replica_sessions import NoSessions, ReplicaSessions, check_replica_name
from toolwire_server.transports.request_limits import RequestLimits
from toolwire_server.transports.responses import send_json
from toolwire_server.transports.routing_headers import RoutingHeaders
from toolwire_server.transports.sessions import SessionGuard
from toolwire_server.transports.slow_clients import with_header_timeout
from toolwire_shared import errors

log = logging.getLogger("toolwire.server")

MCP_PATH = "/mcp"


class Gate:
    """In front of /mcp: refuse over-large bodies (413) and unknown callers (401; 403 for an OAuth token without a
    required scope or agent), with bodies a person can read and RFC 6750/9728 challenges when OAuth is configured;
    read a POST's body within `body_timeout_s` (else 408, and the connection is closed); leave the caller's Grant
    in the scope for the tool handlers (and, as `user`, for the SDK, which binds each session to who opened it)."""

    def __init__(
        self,
        app: ASGIApp,
        access: Access | None,
        max_body_bytes: int,
        body_timeout_s: float,
        oauth: GrantVerifier | None = None,
    ) -> None:
        self.app = app
        self.access = access
        self.oauth = oauth
        self.max_body_bytes = max_body_bytes
        self.body_timeout_s = body_timeout_s
        self._users: dict[str, AuthenticatedUser] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != MCP_PATH:
            await self.app(scope, receive, send)
            return
        declared, auth = _length_and_auth(scope)
        # len() first: int() of a header of thousands of digits raises instead of answering
        if declared.isdigit() and (len(declared) > 18 or int(declared) > self.max_body_bytes):
            await self._too_large(send, errors.clip(declared, 20))
            return
        if self.access is None:
            scope[GRANT_SCOPE_KEY] = ALL_TOOLS
        else:
            grant = await self._identify(scope, auth, send)
            if grant is None:
                return
            scope[GRANT_SCOPE_KEY] = grant
            scope["user"] = self._user(grant)
        if scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        connection = connection_of(scope)
        if connection is not None and connection.body_in:  # all there: reading it cannot stall
            body, disconnected = await read_body(receive, self.max_body_bytes)
        else:
            body, disconnected = b"", False
            with anyio.move_on_after(self.body_timeout_s) as deadline:
                body, disconnected = await read_body(receive, self.max_body_bytes)
            if deadline.cancelled_caught:
                await self._body_too_slow(scope, send)
                return
        if disconnected:
            return
        if len(body) > self.max_body_bytes:  # a chunked body, with no Content-Length to refuse it by
            await self._too_large(send, f"over {self.max_body_bytes}")
            return
        await self.app(scope, replay(body, receive), send)

    async def _body_too_slow(self, scope: Scope, send: Send) -> None:
        log.warning("408 for %s %s: the body took over %g s", scope["method"], scope["path"], self.body_timeout_s)
        message = texts.body_timeout(self.body_timeout_s)
        await send_json(send, 408, {"error": "request_timeout", "message": message}, close=True)

    async def _identify(self, scope: Scope, auth: str, send: Send) -> Grant | None:
        """The caller's Grant: a static token first (constant time), else an OAuth access token; or None once the
        refusal is sent."""
        assert self.access is not None
        scheme, _, token = auth.partition(" ")
        token = token.strip() if scheme.lower() == "bearer" else ""
        grant = self.access.grant_for_token(token) if token else None
        if grant is not None:
            return grant
        if token and self.oauth is not None:
            verdict = await self.oauth.verify(token)
            if isinstance(verdict, Grant):
                return verdict
            await self._refuse(scope, send, verdict)
            return None
        problem = texts.NO_TOKEN if not auth else texts.TOKEN_NOT_RECOGNISED
        log.warning("401 for %s %s: %s", scope["method"], scope["path"], problem)
        if self.oauth is None:
            message, challenge = texts.unauthorized(problem), 'Bearer realm="toolwire"'
        else:
            s = self.oauth.settings
            message = texts.unauthorized(
                problem, issuer=s.issuer, resource=s.resource, metadata=self.oauth.metadata_url
            )
            challenge = oauth.challenge(self.oauth.metadata_url, "invalid_token" if auth else None, problem)
        await send_json(send, 401, {"error": "unauthorized", "message": message}, {"www-authenticate": challenge})
        return None

    async def _refuse(self, scope: Scope, send: Send, refusal: Refusal) -> None:
        assert self.oauth is not None
        log.warning(
            "%d for %s %s: %s", refusal.status, scope["method"], scope["path"], refusal.description or refusal.error
        )
        headers = {}
        if refusal.status in (401, 403):
            error = refusal.error if refusal.error != "forbidden" else None
            challenge = oauth.challenge(self.oauth.metadata_url, error, refusal.description, refusal.scope)
            headers["www-authenticate"] = challenge
        body = {"error": "unauthorized" if refusal.status == 401 else refusal.error, "message": refusal.message}
        await send_json(send, refusal.status, body, headers)

    async def _too_large(self, send: Send, size: str) -> None:
        message = f"request body is {size} bytes; this server accepts at most {self.max_body_bytes}. "
        await send_json(send, 413, {"error": "request_too_large", "message": message + "Send smaller arguments."})

    def _user(self, grant: Grant) -> AuthenticatedUser:
        user = self._users.get(grant.agent)
        if user is None:
            user = self._users[grant.agent] = AuthenticatedUser(AccessToken(token="", client_id=grant.agent, scopes=[]))
        return user


def _length_and_auth(scope: Scope) -> tuple[str, str]:
    """The Content-Length and Authorization values ("" if absent; the last of a repeated name), the two Gate reads."""
    declared = auth = ""
    for name, value in scope["headers"]:
        name = name.lower()
        if name == b"content-length":
            declared = value.decode(errors="replace")
        elif name == b"authorization":
            auth = value.decode(errors="replace")
    return declared, auth


def http_app(
    registry: Registry,
    *,
    access: Access | None = None,
    limits: ServerLimits | None = None,
    host: str = "127.0.0.1",
    port: int | None = None,
    allowed_hosts: list[str] | None = None,
    allowed_origins: list[str] | None = None,
    replica: str | None = None,
    one_port_workers: int = 1,
) -> Starlette:
    """The Starlette app serving `registry` at /mcp (plus GET /healthz, and with an [oauth] access config the
    protected-resource metadata, never behind auth). `host`, `port` (None: the port each connection arrived at)
    and `allowed_hosts`/`allowed_origins` decide which Host and Origin headers are answered (host_origin.py).
    `replica`: this replica's name, at the start of the session ids it issues; `one_port_workers` > 1: one of
    that many processes on one port, so no legacy sessions (see replica_sessions.py). Raises ValueError for a
    malformed allowed host or origin."""
    limits = limits or ServerLimits()
    rule = HostOriginRule(host, port, allowed_hosts or (), allowed_origins or ())
    server = build_server(registry, limits=limits)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok", "server": registry.name, "tools": len(registry)})

    routes = [Route("/healthz", healthz, methods=["GET"])]
    verifier = None
    if access is not None and access.oauth is not None:
        verifier = GrantVerifier(access.oauth, access.subjects)
        document = oauth.metadata(access.oauth, registry.name)

        async def resource_metadata(request: Request) -> Response:
            return JSONResponse(document)

        paths = oauth.metadata_paths(access.oauth.resource, oauth.METADATA_PATH + MCP_PATH)
        routes += [Route(path, resource_metadata, methods=["GET"]) for path in paths]

    # HostOriginCheck decides Host/Origin for every path; the SDK's own check (on by default on loopback) is off,
    # so there is one rule, not two that can disagree. The SDK still checks a POST's Content-Type.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        max_request_body_size=limits.max_body_bytes,
        session_idle_timeout=limits.session_idle_timeout_s,
        max_sessions=limits.max_sessions,
        transport_security=security,
        host=host,
        custom_starlette_routes=routes,
    )
    if replica is not None:
        check_replica_name(replica)  # now: Starlette builds its middleware at the first request
        app.add_middleware(ReplicaSessions, replica=replica, mcp_path=MCP_PATH)
    if one_port_workers > 1:
        app.add_middleware(NoSessions, workers=one_port_workers, mcp_path=MCP_PATH)
    if verifier is not None:
        oauth.refresh_in_lifespan(app, verifier.keys)
    if registry.policy is not None:
        _within_lifespan(app, registry.policy.serving)
    _within_lifespan(app, _telemetry_sent)  # outermost: after the policy's last audit records
    app.add_middleware(CancelOnDisconnect, max_body_bytes=limits.max_body_bytes)
    app.add_middleware(
        SessionGuard,
        mcp_path=MCP_PATH,
        max_sessions=limits.max_sessions,
        max_per_agent=limits.max_sessions_per_agent,
        idle_timeout_s=limits.session_idle_timeout_s,
    )
    if fast_path.enabled():  # inside Gate: the caller is known and the body read
        answerer = Answerer(registry, limits, server.server_info_stamp)
        app.add_middleware(FastHttpCalls, answerer=answerer, mcp_path=MCP_PATH)
    app.add_middleware(RoutingHeaders, mcp_path=MCP_PATH)  # inside Gate: the body read
    if registry.policy is not None and registry.policy.request_rules:
        app.add_middleware(RequestLimits, policy=registry.policy, mcp_path=MCP_PATH)  # inside Gate: the caller known
    app.add_middleware(
        Gate,
        access=access,
        max_body_bytes=limits.max_body_bytes,
        body_timeout_s=limits.body_timeout_s,
        oauth=verifier,
    )
    app.add_middleware(HostOriginCheck, rule=rule)  # outermost: no path, route or method skips it
    return app


@asynccontextmanager
async def _telemetry_sent() -> AsyncIterator[None]:
    """uvicorn ends the process by raising SIGTERM again after the lifespan, so atexit never runs: the spans,
    metrics and log records still queued are sent here, as the server stops (they were lost before)."""
    try:
        yield
    finally:
        await anyio.to_thread.run_sync(flush_installed)


def _within_lifespan(app: Starlette, context: Callable[[], AbstractAsyncContextManager[None]]) -> None:
    """Enter `context` for as long as `app` runs (uvicorn stops it on SIGTERM before it ends the process)."""
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(running: Any) -> AsyncIterator[Any]:
        async with context(), inner(running) as state:
            yield state

    app.router.lifespan_context = lifespan


def serve_http(
    app: Starlette, *, host: str = "127.0.0.1", port: int = 8000, limits: ServerLimits | None = None
) -> None:
    """Run under uvicorn until interrupted; uvicorn logs to stderr. A connection whose request headers take over
    `limits.header_timeout_s` is closed (uvicorn's httptools protocol with that deadline added: slow_clients.py).
    The loop is uvicorn's "auto": uvloop, a dependency wherever it installs."""
    limits = limits or ServerLimits()
    protocol = with_header_timeout(limits.header_timeout_s)
    uvicorn.run(  # workers=1: a $WEB_CONCURRENCY in the environment would ask for more (see processes.py)
        app, host=host, port=port, workers=1, log_level="warning", access_log=False, http=protocol
    )


class PortInUse(OSError):
    """`serve --http` cannot bind its host and port; the message says which and what to do."""


def check_bindable(host: str, port: int) -> None:
    """Bind `host:port` as uvicorn will (SO_REUSEADDR) and let go again, so a port in use is said before the server
    says it is serving. Raises PortInUse."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise PortInUse(
                    f"port {port} on {host} is in use (another server listens there): stop it or choose another --port"
                ) from exc
            raise PortInUse(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
