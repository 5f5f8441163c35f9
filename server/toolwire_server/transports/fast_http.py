"""The lean path for tools/call over Streamable HTTP: a plain 2026-07-28 POST (fast_path.fast_call, and every rung of
the SDK's modern-era ladder passes: Content-Type, Accept, routing headers) is answered here with the same JSON
the SDK answers, without the session guard, the SDK's session manager, dispatcher and middleware chain. Anything
else goes on to the SDK. The call is cancelled when the client goes away, as on the SDK path. Sits right inside
`Gate`, which has already authenticated the caller and read the body, itself inside `HostOriginCheck`, which has
already refused a foreign Host or Origin (DNS rebinding) for this path and the SDK's alike."""

import logging

import anyio
import pydantic_core
from mcp.server.streamable_http import check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared.inbound import InboundLadderRejection, classify_inbound_request
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from toolwire_server.app import GRANT_SCOPE_KEY
from toolwire_server.auth.access import Grant
from toolwire_server.transports.bodies import put_back, replay
from toolwire_server.transports.connection import Connection, connection_of
from toolwire_server.transports.fast_path import Answerer, FastCall, fast_call

log = logging.getLogger("toolwire.server")

_ROUTING = (b"mcp-protocol-version", b"mcp-method", b"mcp-name")
ACCEPT_BOTH = ("application/json, text/event-stream", "text/event-stream, application/json")
"""Accept values the SDK's check_accept_headers finds JSON in (test_fast_http.py asserts it), with Content-Type
application/json, which its transport security takes."""


class FastHttpCalls:
    def __init__(self, app: ASGIApp, answerer: Answerer, mcp_path: str) -> None:
        self.app, self.answerer, self.mcp_path = app, answerer, mcp_path
        self.security = TransportSecurityMiddleware()  # Content-Type only: Host/Origin are host_origin.py's

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._candidate(scope):
            await self.app(scope, receive, send)
            return
        first = await receive()  # Gate read the whole body: it comes back as one message
        body = first.get("body", b"") if first["type"] == "http.request" and not first.get("more_body") else None
        receive = replay(body, receive) if body is not None else put_back(first, receive)
        call = await self._call(scope, receive, body) if body is not None else None
        if call is None:
            await self.app(scope, receive, send)
            return
        connection = connection_of(scope)
        if connection is not None:
            answer = await self._answer_watched(call, scope[GRANT_SCOPE_KEY], connection)
        else:
            answer = await self._answer_watching(call, scope[GRANT_SCOPE_KEY], receive)
        if answer is None:
            log.info("call of %s cancelled (client went away)", call.name)
            return
        # logged before the answer leaves: a client that reads the log once answered finds the line there
        log.debug("answered tools/call %s (id %r) on the fast path", call.name, call.request_id)
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(answer)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": answer})

    async def _answer_watched(self, call: FastCall, grant: Grant, connection: Connection) -> bytes | None:
        """The answer, or None if the client went away first (our server's protocol says when: no task per call)."""
        with anyio.CancelScope() as cancel:
            connection.watch(cancel.cancel)  # the client went away: stop the call, as the SDK path does
            try:
                return await self.answerer.answer(call, grant)
            finally:
                connection.unwatch()
        return None

    async def _answer_watching(self, call: FastCall, grant: Grant, receive: Receive) -> bytes | None:
        """The same under another ASGI server: a task waits for the disconnect message."""
        answer: bytes | None = None
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                group.cancel_scope.cancel()

            group.start_soon(watch)
            answer = await self.answerer.answer(call, grant)
            group.cancel_scope.cancel()
        return answer

    def _candidate(self, scope: Scope) -> bool:
        """A POST to the MCP path that names tools/call at a modern version, each routing header exactly once."""
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"].rstrip("/") != self.mcp_path:
            return False
        routing = [(k, v) for k, v in scope["headers"] if k in _ROUTING]
        names = [k for k, _ in routing]
        if len(names) != len(set(names)) or len(names) != len(_ROUTING):
            return False
        found = dict(routing)
        return found[b"mcp-method"] == b"tools/call" and found[b"mcp-protocol-version"].decode() in (
            MODERN_PROTOCOL_VERSIONS
        )

    async def _call(self, scope: Scope, receive: Receive, body: bytes) -> FastCall | None:
        # what Starlette's Headers gives (the first of repeated names wins), in one pass instead of a scan per name
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in reversed(scope["headers"])}
        if not await self._sdk_takes_content(scope, receive, headers):
            return None
        try:
            message = pydantic_core.from_json(body)
        except ValueError:
            return None
        call = fast_call(message, self.answerer.registry)
        if call is None:
            return None
        tool = self.answerer.registry.get(call.name)
        if tool is not None and "x-mcp-header" in str(tool.schema):
            return None  # parameters mirrored into headers: the SDK checks those
        verdict = classify_inbound_request(message, headers=headers)
        return None if isinstance(verdict, InboundLadderRejection) else call

    async def _sdk_takes_content(self, scope: Scope, receive: Receive, headers: dict[str, str]) -> bool:
        """The SDK's Content-Type and Accept checks pass (else the SDK answers the refusal). The values every MCP
        client sends are known to pass, without making a Request and parsing them again for each call."""
        if headers.get("content-type") == "application/json" and headers.get("accept") in ACCEPT_BOTH:
            return True
        request = Request(scope, receive)
        if await self.security.validate_request(request, is_post=True) is not None:
            return False
        has_json, _ = check_accept_headers(request)
        return has_json
