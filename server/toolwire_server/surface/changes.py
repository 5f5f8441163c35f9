"""Change notifications: what a registry posts (a list changed, a resource updated) reaches every client of every
server built from it and running now. 2026-07-28 clients get them on their `subscriptions/listen` streams (the
SDK's ListenHandler reading the hub's bus); handshake-era clients with a standalone channel (stdio, stateful HTTP)
get `notifications/...` on it, a resource update only where they sent `resources/subscribe` for that URI.

Either way an agent hears a resource update only for a URI its grant allows (`deliverable`): a connection keeps the
grant of its requests, a listen stream the grant of the request that opened it (listen.py). A list change is
delivered to everyone: it carries no name or URI, and the listing it prompts is filtered by the grant."""

import logging
import math
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.connection import Connection
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolwire_server.auth.access import Grant

log = logging.getLogger("toolwire.server")

__all__ = [
    "Changes",
    "Hub",
    "PromptsListChanged",
    "ResourceUpdated",
    "ResourcesListChanged",
    "ToolsListChanged",
    "deliverable",
]

_WATCHED = "toolwire.watched"
"""Where a connection keeps the URIs it subscribed to (its own `state`, so they end with it)."""
_GRANT = "toolwire.grant"
"""Where a connection keeps the grant of the agent whose requests came on it."""


def deliverable(grant: Grant | None, event: ServerEvent) -> bool:
    """Whether an agent with `grant` may hear `event`: a resource update only for a URI it may read (no grant
    known: none); a list change always."""
    if isinstance(event, ResourceUpdated):
        return grant is not None and grant.allows_uri(event.uri)
    return True


class Hub:
    """One running server's fan-out: its listen bus, and the handshake-era connections it has seen."""

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self._connections: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._send: MemoryObjectSendStream[ServerEvent] | None = None
        self._token: anyio.lowlevel.EventLoopToken | None = None

    def seen(self, session: Any, grant: Grant) -> None:
        """Note the connection a request came on and its caller's grant (called for every request): a handshake-era
        one with a channel of its own gets the list-changed notifications from now on."""
        connection = connection_of(session)
        if (
            connection is not None
            and connection.protocol_version not in MODERN_PROTOCOL_VERSIONS
            and connection.has_standalone_channel
        ):
            connection.state[_GRANT] = grant  # a session is bound to one agent (sessions.py): the same grant
            self._connections.add(connection)

    def subscribe(self, session: Any, grant: Grant, uri: str) -> None:
        connection = connection_of(session)
        if connection is not None:
            self.seen(session, grant)
            connection.state.setdefault(_WATCHED, set()).add(uri)

    def unsubscribe(self, session: Any, uri: str) -> None:
        connection = connection_of(session)
        if connection is not None:
            connection.state.get(_WATCHED, set()).discard(uri)

    def post(self, event: ServerEvent) -> None:
        """From the server's loop or any thread; delivered in order by the hub's own task."""
        send, token = self._send, self._token
        if send is None or token is None:
            return
        try:
            if _on_loop(token):
                send.send_nowait(event)
            else:
                anyio.from_thread.run_sync(send.send_nowait, event, token=token)
        except (anyio.ClosedResourceError, RuntimeError):  # the server stopped meanwhile: nobody left to tell
            log.debug("change %s after the server stopped: dropped", type(event).__name__)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        send, receive = anyio.create_memory_object_stream[ServerEvent](math.inf)
        self._send, self._token = send, anyio.lowlevel.current_token()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._deliver, receive)
                yield
                tg.cancel_scope.cancel()
        finally:
            self._send = self._token = None
            send.close()

    async def _deliver(self, events: MemoryObjectReceiveStream[ServerEvent]) -> None:
        async for event in events:
            await self.bus.publish(event)
            for connection in list(self._connections):
                try:
                    await _notify(connection, event)
                except Exception as exc:  # a client gone away: forget it, keep telling the others
                    log.info("dropping a connection from change notifications: %s", type(exc).__name__)
                    self._connections.discard(connection)


async def _notify(connection: Connection, event: ServerEvent) -> None:
    if isinstance(event, ResourceUpdated):
        grant = connection.state.get(_GRANT)
        if event.uri in connection.state.get(_WATCHED, ()) and isinstance(grant, Grant) and deliverable(grant, event):
            await connection.send_resource_updated(event.uri)
    elif isinstance(event, ToolsListChanged):
        await connection.send_tool_list_changed()
    elif isinstance(event, PromptsListChanged):
        await connection.send_prompt_list_changed()
    else:
        await connection.send_resource_list_changed()


class Changes:
    """A registry's outbox: every hub of a server built from it and running now."""

    def __init__(self) -> None:
        self._hubs: set[Hub] = set()

    def post(self, event: ServerEvent) -> None:
        for hub in list(self._hubs):
            hub.post(event)

    @asynccontextmanager
    async def serving(self, hub: Hub) -> AsyncIterator[None]:
        async with hub.running():
            self._hubs.add(hub)
            try:
                yield
            finally:
                self._hubs.discard(hub)


def connection_of(session: Any) -> Connection | None:
    """The connection a per-request session proxy belongs to (the SDK makes one proxy per request and keeps the
    connection, whose standalone channel outlives the request, private)."""
    connection = getattr(session, "_connection", None)
    return connection if isinstance(connection, Connection) else None


def _on_loop(token: anyio.lowlevel.EventLoopToken) -> bool:
    try:
        return anyio.lowlevel.current_token().native_token is token.native_token
    except RuntimeError:
        return False
