"""The tool server's Host/Origin middleware, outermost: every request on every path (fast path, SDK path, both
protocol eras, /healthz, the OAuth metadata) passes it first. The rule itself, and why each part of it is so, is
`toolwire_shared.host_origin` (the run console applies the same one); the SDK's own check is switched off, so the
two cannot disagree."""

import logging

from starlette.types import ASGIApp, Receive, Scope, Send

from toolwire_server.transports.responses import send_json
from toolwire_shared.host_origin import (
    HostOriginRule,
    Refusal,
    check_allowed_host,
    check_allowed_origin,
    request_headers,
)

__all__ = ["HostOriginCheck", "HostOriginRule", "Refusal", "check_allowed_host", "check_allowed_origin"]

log = logging.getLogger("toolwire.server")


class HostOriginCheck:
    """The outermost middleware: every HTTP request passes `rule` first, whatever its path and method. A refusal
    is a JSON body a person can read (421 for Host, 403 for Origin) and a warning line."""

    def __init__(self, app: ASGIApp, rule: HostOriginRule) -> None:
        self.app, self.rule = app, rule

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):  # lifespan
            await self.app(scope, receive, send)
            return
        refusal = self.rule.check(*request_headers(scope))
        if refusal is None:
            await self.app(scope, receive, send)
            return
        method = scope.get("method", "WebSocket")
        log.warning("%d for %s %s: %s refused", refusal.status, method, scope["path"], refusal.log)
        if scope["type"] == "websocket":  # none is served today; closed before accept, the server answers 403
            await send({"type": "websocket.close", "code": 1008, "reason": ""})
            return
        await send_json(send, refusal.status, {"error": refusal.error, "message": refusal.message})
