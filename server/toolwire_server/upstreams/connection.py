"""One upstream MCP server, kept connected with the `mcp` SDK's client: a stdio command spawned with only the
environment its entry names, or a Streamable HTTP URL called with the host's own credential (never an agent's
token: MCP forbids passing it through). A connection that ends (the process died, the server went away) is
reopened with backoff (the MCP kit's Supervisor with a Backoff policy, toolwire_shared/mcp_kit); meanwhile
`retry_in()` says how long until the next attempt. An idle connection is pinged (every `ping_s`), so an upstream
that died while nobody called it is reopened before a call finds it dead."""

import logging
import math
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import httpx2
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types.jsonrpc import CONNECTION_CLOSED

from toolwire_shared.mcp_kit.errors import why
from toolwire_shared.mcp_kit.listing import MAX_LISTED, MAX_PAGES, ListingRefused, every_page
from toolwire_shared.mcp_kit.restarts import Backoff
from toolwire_shared.mcp_kit.supervisor import Supervisor

log = logging.getLogger("toolwire.server")

FIRST_BACKOFF_S = 0.5
MAX_BACKOFF_S = 30.0
STEADY_S = 60.0
"""Up this long, an upstream that ends starts again from the first backoff; one that dies sooner (a crash loop)
keeps doubling it."""
CLIENT_INFO = types.Implementation(name="toolwire-gateway", version="1")
PING_S = 30.0
"""How long an upstream may stay silent before it is pinged (an entry's `ping_s`)."""
PING_TIMEOUT_S = 10.0
"""A ping unanswered this long means the upstream is gone (a host that vanished answers nothing, not an error)."""
__all__ = ["MAX_LISTED", "MAX_PAGES", "Endpoint", "Listing", "ListingRefused", "Upstream"]  # the bounds: listing.py


@dataclass(frozen=True)
class Endpoint:
    """How to reach one upstream; `env` is everything a command gets beside the SDK's safe basics (PATH, HOME,
    USER, LOGNAME, SHELL, TERM: what a program needs to find its interpreter and its user's files)."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict, repr=False)
    url: str | None = None
    token: str | None = field(default=None, repr=False)
    ping_s: float = PING_S

    def describe(self) -> str:
        return self.url or " ".join([self.command or "", *self.args]).strip()


@dataclass(frozen=True)
class Listing:
    """What an upstream offers (prompts and resources only where it declares them)."""

    tools: list[types.Tool]
    prompts: list[types.Prompt]
    resources: list[types.Resource] = field(default_factory=list)
    templates: list[types.ResourceTemplate] = field(default_factory=list)


class Upstream:
    """The live session with one upstream (None while it is down) and the supervisor that keeps it up."""

    def __init__(
        self,
        endpoint: Endpoint,
        on_listing: Callable[[Listing], None],
        on_updated: Callable[[str], None] = lambda uri: None,
    ) -> None:
        self.endpoint = endpoint
        self.session: ClientSession | None = None
        self.watched: set[str] = set()
        """The URIs subscribed to at the upstream (again after every reconnection), for `on_updated`."""
        self._on_listing = on_listing
        self._on_updated = on_updated
        self._supervisor = Supervisor(f"upstream {endpoint.name}", Backoff(FIRST_BACKOFF_S, MAX_BACKOFF_S, STEADY_S))
        self._stale = anyio.Event()
        self._heard_at = 0.0
        self._busy = 0
        self._ping_out = False
        """A ping is unanswered: if the connection breaks now (an HTTP transport fails whole), the ping found it."""

    def retry_in(self) -> float:
        """Seconds until the next connection attempt (at least 1, for a readable answer)."""
        return max(1.0, math.ceil(self._supervisor.retry_at - anyio.current_time()))

    def restarting(self) -> str:
        """What a request meets while the upstream is down (it did not reach the upstream)."""
        return f"upstream {self.endpoint.name} is restarting; try again in {self.retry_in():g} s"

    async def watch(self, uri: str) -> bool:
        """Subscribe to `uri`'s updates at the upstream (once: a subscription here serves every agent). It is
        `watched` (subscribed again after a reconnection) only once the upstream accepted it; False: the upstream
        offers no subscriptions, so nothing is watched. Down: an MCPError with the code of a closed connection."""
        session = self.session
        if session is None:
            raise MCPError(code=CONNECTION_CLOSED, message="not connected")
        if not await _subscribe(session, uri):
            return False
        self.watched.add(uri)
        return True

    @contextmanager
    def busy(self) -> Iterator[None]:
        """Around a request sent for an agent: an upstream with one in flight is not idle, so it is not pinged (a
        server that answers nothing while it works, as one running a blocking tool on its loop, is not restarted
        under a call; the call has its own timeout)."""
        self._busy += 1
        try:
            yield
        finally:
            self._busy -= 1
            self._heard_at = max(self._heard_at, anyio.current_time())

    def lost(self) -> None:
        """A call found the connection broken: end it now, so the supervisor reconnects."""
        self._supervisor.end()

    async def supervise(self, first_attempt: anyio.Event) -> None:
        """Connect, list the tools, follow `list_changed`, and reconnect with doubling backoff when it ends (the
        kit's Supervisor with a Backoff policy: `first_attempt` is set after each attempt)."""

        async def connection() -> None:
            try:
                await self._connection(first_attempt)
            finally:
                self.session = None
                first_attempt.set()

        await self._supervisor.run(connection, self._failed)

    async def _connection(self, first_attempt: anyio.Event) -> None:
        """One connection: listed, subscribed again, then followed and kept alive until it ends."""
        self._stale, self._ping_out = anyio.Event(), False
        async with self._connected() as session:
            await self._refresh(session)
            for uri in sorted(self.watched):
                await self._resubscribe(session, uri)
            self.session = session
            self._supervisor.up()
            first_attempt.set()
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._follow_changes, session)
                tg.start_soon(self._keep_alive, session)
                await self._supervisor.wait_ended()
                tg.cancel_scope.cancel()

    async def _failed(self, exc: Exception) -> None:
        """A dead or unreachable upstream is logged and retried, never fatal."""
        if self._ping_out:
            log.warning("upstream %s did not answer a ping (%s)", self.endpoint.name, why(exc))
        else:
            log.warning("upstream %s (%s) failed: %s", self.endpoint.name, self.endpoint.describe(), why(exc))

    @asynccontextmanager
    async def _connected(self) -> AsyncIterator[ClientSession]:
        async with self._transport() as (read, write), anyio.create_task_group() as tg:
            relay_send, relay_read = anyio.create_memory_object_stream[SessionMessage | Exception](0)
            tg.start_soon(self._relay, read, relay_send)
            handler = self._on_message
            async with ClientSession(relay_read, write, message_handler=handler, client_info=CLIENT_INFO) as session:
                await session.initialize()
                yield session
            tg.cancel_scope.cancel()

    @asynccontextmanager
    async def _transport(self) -> AsyncIterator[tuple[Any, Any]]:
        endpoint = self.endpoint
        if endpoint.url is not None:
            headers = {"Authorization": f"Bearer {endpoint.token}"} if endpoint.token else {}
            timeout = httpx2.Timeout(30.0, read=300.0)
            async with (
                httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
                streamable_http_client(endpoint.url, http_client=http) as streams,
            ):
                yield streams[0], streams[1]
            return
        params = StdioServerParameters(command=endpoint.command or "", args=list(endpoint.args), env=endpoint.env)
        async with stdio_client(params, errlog=sys.stderr) as streams:
            yield streams[0], streams[1]

    async def _relay(
        self, read: MemoryObjectReceiveStream[Any], relay: MemoryObjectSendStream[SessionMessage | Exception]
    ) -> None:
        """Pass the transport's messages to the session, and notice when they end (the process died)."""
        async with relay:
            try:
                async for message in read:
                    self._heard_at = anyio.current_time()
                    await relay.send(message)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
                pass
        self._supervisor.end()

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, _LIST_CHANGED):
            self._stale.set()  # refreshed by _follow_changes: a request from inside the read loop would wait on it
        elif isinstance(message, types.ResourceUpdatedNotification):
            self._on_updated(message.params.uri)

    async def _keep_alive(self, session: ClientSession) -> None:
        """Ping the upstream whenever it has said nothing for `ping_s` and nothing is in flight; no answer (or a
        broken connection) ends the connection, so the supervisor restarts it as after a crash (its tools stay
        listed; calls meanwhile get the `restarting` answer). An error answer is an answer: the upstream lives."""
        self._heard_at = anyio.current_time()
        while True:
            await anyio.sleep(max(0.0, self._heard_at + self.endpoint.ping_s - anyio.current_time()))
            if self._busy:
                self._heard_at = anyio.current_time()
                continue
            if anyio.current_time() - self._heard_at < self.endpoint.ping_s:
                continue  # it spoke meanwhile
            self._ping_out = True
            try:
                with anyio.fail_after(PING_TIMEOUT_S):
                    await session.send_ping()
            except MCPError as exc:
                if exc.error.code != CONNECTION_CLOSED:
                    self._ping_out, self._heard_at = False, anyio.current_time()
                    continue
                reason = exc.error.message
            except Exception as exc:  # no answer in time, or the transport broke: gone either way
                reason = why(exc)
            else:
                self._ping_out = False
                continue
            log.warning("upstream %s did not answer a ping (%s)", self.endpoint.name, reason)
            self._supervisor.end()
            return

    async def _follow_changes(self, session: ClientSession) -> None:
        while True:
            await self._stale.wait()
            self._stale = anyio.Event()
            await self._refresh(session)

    async def _refresh(self, session: ClientSession) -> None:
        """The upstream's listing; one over a bound (`MAX_PAGES`, `MAX_LISTED`) is refused whole, the previous one
        kept (the upstream is not dropped: its tools as they were still answer)."""
        try:
            listing = await self._listing(session)
        except ListingRefused as exc:
            log.warning("upstream %s: listing refused, the previous one kept: %s", self.endpoint.name, exc)
            return
        self._on_listing(listing)

    async def _listing(self, session: ClientSession) -> Listing:
        capabilities = session.server_capabilities or types.ServerCapabilities()
        tools = await every_page(lambda at: session.list_tools(params=_page(at)), lambda p: p.tools, "tools")
        prompts = (
            await every_page(lambda at: session.list_prompts(params=_page(at)), lambda p: p.prompts, "prompts")
            if capabilities.prompts is not None
            else []
        )
        resources: list[types.Resource] = []
        templates: list[types.ResourceTemplate] = []
        if capabilities.resources is not None:
            resources = await self._optional(
                every_page(lambda at: session.list_resources(params=_page(at)), lambda p: p.resources, "resources")
            )
            templates = await self._optional(
                every_page(
                    lambda at: session.list_resource_templates(params=_page(at)),
                    lambda p: p.resource_templates,
                    "resource_templates",
                )
            )
        return Listing(tools, prompts, resources, templates)

    async def _optional(self, listing: Awaitable[list[Any]]) -> list[Any]:
        """A resource listing the upstream refuses (many declare resources but have no templates) is empty, not a
        reason to drop the upstream."""
        try:
            return await listing
        except MCPError as exc:
            if exc.error.code == CONNECTION_CLOSED:
                raise
            log.warning("upstream %s: a resource listing failed: %s", self.endpoint.name, exc.error.message)
            return []

    async def _resubscribe(self, session: ClientSession, uri: str) -> None:
        """A subscription made before a reconnection; one the upstream refuses now is forgotten, not fatal."""
        try:
            if not await _subscribe(session, uri):  # it offers subscriptions no more
                self.watched.discard(uri)
        except MCPError as exc:
            if exc.error.code == CONNECTION_CLOSED:
                raise
            log.warning("upstream %s: subscribing again to %s failed: %s", self.endpoint.name, uri, exc.error.message)
            self.watched.discard(uri)


_LIST_CHANGED = (
    types.ToolListChangedNotification,
    types.PromptListChangedNotification,
    types.ResourceListChangedNotification,
)


async def _subscribe(session: ClientSession, uri: str) -> bool:
    """`resources/subscribe` where the upstream offers it (the gateway's session is a handshake-era one): whether
    it was sent (and accepted: a refusal raises)."""
    resources = session.server_capabilities.resources if session.server_capabilities else None
    if resources is None or not resources.subscribe:
        return False
    request = types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri))
    await session.send_request(request, types.EmptyResult)
    return True


def _page(cursor: str | None) -> types.PaginatedRequestParams | None:
    return types.PaginatedRequestParams(cursor=cursor) if cursor else None
