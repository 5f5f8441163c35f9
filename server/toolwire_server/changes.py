"""Change notifications: what a registry posts (a list changed, a resource updated) reaches every session of every
server built from it: 2026-07-28 clients on their `subscriptions/listen` streams (the SDK's ListenHandler and bus),
handshake-era clients as `notifications/...` on their standalone stream (resource updates only where subscribed)."""

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
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

log = logging.getLogger("toolwire.server")

__all__ = ["Changes", "Hub", "PromptsListChanged", "ResourceUpdated", "ResourcesListChanged", "ToolsListChanged"]


class Hub:
    """One running server's fan-out: its listen bus, and the handshake-era connections it has seen."""

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self._connections: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        """connection -> a session proxy of it (whose standalone channel outlives the request that made it)."""
        self._watching: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
        self._send: MemoryObjectSendStream[ServerEvent] | None = None
        self._token: anyio.lowlevel.EventLoopToken | None = None

    def seen(self, session: Any, protocol_version: str) -> None:
        """Note a handshake-era connection (called for each request): it gets list-changed notifications."""
        if protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self._connections.setdefault(_connection(session), session)

    def subscribe(self, session: Any, uri: str) -> None:
        key = _connection(session)
        self._connections.setdefault(key, session)
        self._watching.setdefault(key, set()).add(uri)

    def unsubscribe(self, session: Any, uri: str) -> None:
        self._watching.get(_connection(session), set()).discard(uri)

    def post(self, event: ServerEvent) -> None:
        """From the server's loop or any thread; delivered in order by the hub's own task."""
        send, token = self._send, self._token
        if send is None or token is None:
            return
        if _on_loop(token):
            send.send_nowait(event)
        else:
            anyio.from_thread.run_sync(send.send_nowait, event, token=token)

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
            for connection, session in list(self._connections.items()):
                if isinstance(event, ResourceUpdated):
                    if event.uri in self._watching.get(connection, ()):
                        await session.send_resource_updated(event.uri)
                elif isinstance(event, ToolsListChanged):
                    await session.send_tool_list_changed()
                elif isinstance(event, PromptsListChanged):
                    await session.send_prompt_list_changed()
                else:
                    await session.send_resource_list_changed()


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


def _connection(session: Any) -> Any:
    """The connection a per-request session proxy belongs to: the SDK makes one proxy per request."""
    return getattr(session, "_connection", session)


def _on_loop(token: anyio.lowlevel.EventLoopToken) -> bool:
    try:
        return anyio.lowlevel.current_token().native_token is token.native_token
    except RuntimeError:
        return False
