"""HTTP: the `[[request_limits]]` of the server's configuration, per agent, on every POST to /mcp, inside Gate (the
caller is known): one over the limit is refused whole, 429 with Retry-After (whole seconds, rounded up) and a body
that says which limit and when. Tool-call limits are not here: those answer a readable tool result (policy/)."""

import logging
import math

from starlette.types import ASGIApp, Receive, Scope, Send

from toolwire_server import texts
from toolwire_server.app import GRANT_SCOPE_KEY
from toolwire_server.auth.access import Grant
from toolwire_server.policy.guard import CallPolicy
from toolwire_server.transports.responses import send_json

log = logging.getLogger("toolwire.server")


class RequestLimits:
    def __init__(self, app: ASGIApp, policy: CallPolicy, mcp_path: str) -> None:
        self.app, self.policy, self.mcp_path = app, policy, mcp_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        grant = scope.get(GRANT_SCOPE_KEY) if scope["type"] == "http" else None
        if isinstance(grant, Grant) and scope["method"] == "POST" and scope["path"].rstrip("/") == self.mcp_path:
            refusal = await self.policy.admit_request(grant.agent)
            if refusal is not None:
                wait = refusal.wait_s or 1.0
                message = texts.requests_limited(grant.agent, refusal.rule.per_minute or 0, wait)
                log.warning("429: %s", message)
                headers = {"retry-after": str(max(1, math.ceil(wait)))}
                await send_json(send, 429, {"error": "rate_limited", "message": message}, headers)
                return
        await self.app(scope, receive, send)
