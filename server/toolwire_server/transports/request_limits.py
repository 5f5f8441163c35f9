"""HTTP: the `[[request_limits]]` of the server's configuration, per agent, on every POST to /mcp, inside Gate (the
caller is known): one over the limit is refused whole, 429 with Retry-After (whole seconds, rounded up) and a body
that says which limit and when. Tool-call limits are not here: those answer a readable tool result (policy/)."""

import logging
import math
import time

from starlette.types import ASGIApp, Receive, Scope, Send

from toolwire_server import texts
from toolwire_server.app import GRANT_SCOPE_KEY
from toolwire_server.auth.access import Grant
from toolwire_server.policy.guard import CallPolicy
from toolwire_server.transports.responses import send_json

log = logging.getLogger("toolwire.server")
LOG_EVERY_S = 60.0


class RequestLimits:
    def __init__(self, app: ASGIApp, policy: CallPolicy, mcp_path: str) -> None:
        self.app, self.policy, self.mcp_path = app, policy, mcp_path
        self._said: dict[str, tuple[float, int]] = {}
        """agent -> (when its refusals were last logged, how many since): a flood is one log line a minute."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        grant = scope.get(GRANT_SCOPE_KEY) if scope["type"] == "http" else None
        if isinstance(grant, Grant) and scope["method"] == "POST" and scope["path"].rstrip("/") == self.mcp_path:
            try:
                refusal = await self.policy.admit_request(grant.agent)
            except Exception as exc:  # the shared store is away: fail closed, saying so
                log.warning("request limits: cannot count a request of agent %r (%s); answered 503", grant.agent, exc)
                message = "this server cannot reach the store its limits are counted in; try again later"
                await send_json(send, 503, {"error": "limits_unavailable", "message": message}, {"retry-after": "5"})
                return
            if refusal is not None:
                wait = refusal.wait_s or 1.0
                message = texts.requests_limited(grant.agent, refusal.rule.per_minute or 0, wait)
                self._log(grant.agent, message)
                headers = {"retry-after": str(max(1, math.ceil(wait)))}
                await send_json(send, 429, {"error": "rate_limited", "message": message}, headers)
                return
        await self.app(scope, receive, send)

    def _log(self, agent: str, message: str) -> None:
        now = time.monotonic()
        last, unsaid = self._said.get(agent, (-LOG_EVERY_S, 0))
        if now - last < LOG_EVERY_S:
            self._said[agent] = (last, unsaid + 1)
            return
        more = f" ({unsaid} more refused since the last such line)" if unsaid else ""
        log.warning("429: %s%s", message, more)
        self._said[agent] = (now, 0)
