"""Which Host and Origin headers the HTTP server answers: its protection against DNS rebinding, decided here only.

A web page on a name its author controls can make that name resolve to this machine (DNS rebinding) and then call
the tools from the visitor's browser. The browser sends the page's name as `Host` and the page's origin as `Origin`;
neither can be forged by the page. So every HTTP request, on every path (fast path, SDK path, both protocol eras,
/healthz and the OAuth metadata too), first passes `HostOriginCheck`, the outermost middleware:

- Host must be one of this server's own names, on any port: `localhost`, `127.0.0.1`, `[::1]`, the bound address,
  and when bound to a wildcard (0.0.0.0, ::) the machine's host name, its FQDN, the addresses they resolve to and
  the address the connection arrived at; or a name given with `--allowed-host` (exact, or `name:*` for any port).
  The port in Host is not checked for these names: the browser writes it from the URL it fetches, a page cannot
  choose it, and a proxy in front (deploy/nginx.conf) forwards its own port. Else 421.
- Origin, when sent (browsers send it; other clients do not), must be a page of this server: http(s) on one of its
  names with the served port, or on an `--allowed-host` name[:port]; or one given with `--allowed-origin`. Here the
  port matters: another port is another site (another program on this machine). `Origin: null` is always refused.
  Else 403.

The SDK's own Host/Origin check (TransportSecuritySettings) is switched off, so the two cannot disagree."""

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
