"""`subscriptions/listen` per agent: the SDK's ListenHandler serves the streams, but a stream hears a resource update
only for a URI its agent's grant allows, and one agent holds at most `max_listen_streams_per_agent` of them (else
one agent could take all of the handler's 1,024 and every other agent would be refused).

The SDK's handler subscribes each stream's listener to its bus synchronously, in the task of the listen request;
`GrantedBus` wraps that listener with the grant `AgentListens` set for that task (a ContextVar), which is where a
stream's agent is known. A listener registered with no grant set hears no resource update (fail closed)."""

import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.subscriptions import ListenHandler, ServerEvent, SubscriptionBus
from mcp.shared.exceptions import MCPError

from toolwire_server import texts
from toolwire_server.auth.access import Grant
from toolwire_server.surface.changes import deliverable
from toolwire_server.uris import canonical

log = logging.getLogger("toolwire.server")

_STREAM_GRANT: ContextVar[Grant | None] = ContextVar("toolwire_listen_grant", default=None)


class GrantedBus:
    """The hub's bus as the listen streams see it: each listener filtered by the grant of the stream it serves."""

    def __init__(self, bus: SubscriptionBus) -> None:
        self._bus = bus

    async def publish(self, event: ServerEvent) -> None:
        await self._bus.publish(event)

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        grant = _STREAM_GRANT.get()

        def granted(event: ServerEvent) -> None:
            if deliverable(grant, event):
                listener(event)

        return self._bus.subscribe(granted)


async def _nobody(uri: str, agent: str) -> None:
    """No one to tell of a subscription."""


class AgentListens:
    """The `subscriptions/listen` handler: at most `max_per_agent` open streams per agent, each filtered by the
    agent's grant. Over the cap: -32603 (the code of the SDK's own server-wide listen limit) saying so."""

    def __init__(
        self,
        bus: SubscriptionBus,
        grant_of: Callable[[ServerRequestContext[Any, Any]], Grant],
        max_per_agent: int,
        subscribed: Callable[[str, str], Awaitable[None]] = _nobody,
    ) -> None:
        self._handler = ListenHandler(GrantedBus(bus))
        self._grant_of = grant_of
        self._subscribed = subscribed
        """Told of each URI (and agent) a stream subscribes to that its grant allows (an upstream's then subscribes
        there)."""
        self.max_per_agent = max_per_agent
        self._open: Counter[str] = Counter()

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        who = self._grant_of(ctx)
        if self._open[who.agent] >= self.max_per_agent:
            log.warning("listen refused: agent '%s' has %d streams open", who.agent, self._open[who.agent])
            raise MCPError(code=types.INTERNAL_ERROR, message=texts.too_many_listens(who.agent, self.max_per_agent))
        for uri in params.notifications.resource_subscriptions or []:
            if who.allows_uri(uri):
                await self._subscribed(canonical(uri) or uri, who.agent)
        self._open[who.agent] += 1
        token = _STREAM_GRANT.set(who)
        try:
            return await self._handler(ctx, params)
        finally:
            _STREAM_GRANT.reset(token)
            self._open[who.agent] -= 1
            if not self._open[who.agent]:
                del self._open[who.agent]
