"""McpSource's live connection, as its requests see it: the current `mcp.Client` (None while there is none) and
which connection it is; a request waits for one, fails at once when the Supervisor says there will be none (or none
for now), and reports a drop it met (`lost`: the first to report a connection ends it, and its policy blames the
runs in flight). Requests beside tools/call (listings, prompts, resources) are sent here, an error answer raised
as ServerRequestFailed in the server's words and a listing held to the MCP kit's bounds."""

import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TypeVar

import anyio
import mcp_types as types
from mcp import Client, MCPError

from toolwire_client import texts
from toolwire_client.tools.source import ServerRequestFailed, ToolTransportError
from toolwire_shared.mcp_kit.errors import LOST, closed
from toolwire_shared.mcp_kit.listing import ListingRefused, every_page
from toolwire_shared.mcp_kit.supervisor import Supervisor

log = logging.getLogger("toolwire.client.mcp")
R = TypeVar("R")
Page = TypeVar("Page", types.ListPromptsResult, types.ListResourcesResult, types.ListToolsResult)
Item = TypeVar("Item")


class LiveConnection:
    def __init__(self, name: str, supervisor: Supervisor, running: Callable[[], bool]) -> None:
        self.name, self.supervisor, self._running = name, supervisor, running
        self.client: Client | None = None
        self.generation = 0
        self.first_listing = False
        """True while a run's own server lists its tools the first time: a drop then is a failed start, not a crash
        to restart it for."""
        self.in_flight: Counter[str] = Counter()
        """Run id -> its calls on the wire: who is blamed when the connection drops."""
        self._changed = anyio.Event()

    def opened(self, client: Client) -> None:
        self.client, self.generation = client, self.generation + 1

    def notify(self) -> None:
        """Requests waiting for a connection look again (one is made, or there will be none)."""
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    async def connected(self) -> tuple[Client, int]:
        supervisor = self.supervisor
        while self.client is None:
            if supervisor.stopped or supervisor.paused or supervisor.closing or not self._running():
                why = supervisor.stopped or supervisor.paused or f"the tool server '{self.name}' is not started"
                raise ToolTransportError(why)
            await self._changed.wait()
        return self.client, self.generation

    def lost(self, generation: int) -> None:
        """Called by a request that saw the connection drop; only the first caller per connection restarts it."""
        if generation == self.generation and self.client is not None:
            self.client = None
            if self.first_listing:
                self.supervisor.stop(f"the tool server '{self.name}' stopped before it listed its tools")
            for run_id in self.supervisor.policy.crashed(self.in_flight):
                log.warning("tool server %s: run %s gets no more restarts of it", self.name, run_id)
            self.supervisor.end()

    async def all_pages(
        self, method: str, list_page: Callable[..., Awaitable[Page]], items: Callable[[Page], list[Item]]
    ) -> list[Item]:
        """Every item of a paginated list request, page after page (none when the server does not implement it)."""

        async def page(cursor: str | None) -> Page | None:
            return await self._listing(method, partial(list_page, cursor=cursor))

        return await self.bounded(method, every_page(page, items, method.split("/")[0]))

    async def bounded(self, method: str, listing: Awaitable[list[Item]]) -> list[Item]:
        """A listing within the kit's bounds (listing.py); one past them is the server's failed request."""
        try:
            return await listing
        except ListingRefused as exc:
            text = texts.server_request_failed(self.name, method, str(exc))
            raise ServerRequestFailed(text, types.INTERNAL_ERROR, str(exc)) from exc

    async def _listing(self, method: str, send: Callable[[Client], Awaitable[R]]) -> R | None:
        """A list request; None from a server that does not implement it (it has none of those)."""
        try:
            return await self.ask(method, send)
        except ServerRequestFailed as exc:
            if exc.code == types.METHOD_NOT_FOUND:
                return None
            raise

    async def ask(self, method: str, send: Callable[[Client], Awaitable[R]]) -> R:
        """One request on the live session: an error answer raises ServerRequestFailed in the server's words, a
        dropped connection ToolTransportError (and reconnects, as a call does)."""
        client, generation = await self.connected()
        try:
            return await send(client)
        except MCPError as exc:
            if closed(exc):
                self.lost(generation)
                raise ToolTransportError(f"the tool server '{self.name}' closed the connection") from exc
            text = texts.server_request_failed(self.name, method, exc.error.message)
            raise ServerRequestFailed(text, exc.error.code, exc.error.message) from exc
        except LOST as exc:
            self.lost(generation)
            raise ToolTransportError(f"the tool server '{self.name}' went away ({type(exc).__name__})") from exc
