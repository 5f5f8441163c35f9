"""One MCP tool server as a ToolSource: a stdio command the run spawns and owns, or an HTTP URL with a bearer token.

One owner task enters and exits each `mcp.Client` (anyio cancel scopes must be entered and left in the same task);
calls from any task share the session concurrently. When the server dies mid-run, the calls in flight get a
`ToolTransportError` and the owner reconnects once (a stdio server is spawned again).
"""

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import httpx2
import mcp_types as types
from anyio.abc import TaskGroup, TaskStatus
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from toolwire_client.tools.source import ToolTransportError, TransportInfo
from toolwire_shared import errors
from toolwire_shared.results import ToolResult, failed, from_call_result
from toolwire_shared.tools import IDEMPOTENCY_KEY_META, ToolPolicy, ToolSpec

log = logging.getLogger("toolwire.client.mcp")

LOST = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError, httpx2.TransportError)
"""What a dropped connection looks like from inside call_tool."""


class McpSource:
    """Implements ToolSource. Give either `command` (argv of a stdio server) or `url` (+ optional `token`)."""

    def __init__(
        self,
        name: str,
        *,
        command: list[str] | None = None,
        url: str | None = None,
        token: str | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        max_restarts: int = 1,
    ):
        if (command is None) == (url is None):
            raise ValueError("McpSource needs exactly one of command=[...] (stdio) or url='http://...' (HTTP)")
        self.name, self.command, self.url, self.token = name, command, url, token
        self.env, self.cwd, self.max_restarts = env, cwd, max_restarts
        self.restarts = 0
        self._client: Client | None = None
        self._generation = 0
        self._dead: str | None = None
        self._closing = False
        self._changed = anyio.Event()
        self._wake = anyio.Event()
        self._group: TaskGroup | None = None
        self._info = TransportInfo(transport="pipe" if command else "tcp")
        if url:
            parsed = httpx2.URL(url)
            self._info.server_address, self._info.server_port = parsed.host, parsed.port

    # ---- lifecycle: one owner task per session --------------------------------------------------------------
    async def start(self) -> None:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        try:
            await self._group.start(self._own)
        except BaseException:
            await self._group.__aexit__(None, None, None)
            self._group = None
            raise

    async def aclose(self) -> None:
        if self._group is None:
            return
        self._closing = True
        self._wake.set()
        group, self._group = self._group, None
        await group.__aexit__(None, None, None)  # no shield here: the group's scope must be the innermost one

    async def _own(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        started = False
        while True:
            self._wake = anyio.Event()
            try:
                async with self._open() as client:
                    self._client, self._generation = client, self._generation + 1
                    self._info.protocol_version = client.protocol_version
                    self._notify()
                    if not started:
                        started = True
                        task_status.started()
                    await self._wake.wait()
            except Exception as exc:
                if not started:
                    raise
                log.warning("tool server %s: connection ended with %s: %s", self.name, type(exc).__name__, exc)
            self._client = None
            if self._closing:
                self._notify()
                return
            if self.restarts >= self.max_restarts:
                self._dead = f"the tool server '{self.name}' stopped and was already restarted {self.restarts} time(s)"
                self._notify()
                return
            self.restarts += 1
            log.warning("tool server %s: restarting (%d of %d)", self.name, self.restarts, self.max_restarts)

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[Client]:
        if self.command is not None:
            params = StdioServerParameters(command=self.command[0], args=self.command[1:], env=self.env, cwd=self.cwd)
            async with Client(params, cache=None) as client:
                yield client
            return
        assert self.url is not None
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=None)) as http,
            Client(streamable_http_client(self.url, http_client=http), cache=None) as client,
        ):
            yield client

    def _notify(self) -> None:
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    async def _connected(self) -> tuple[Client, int]:
        while self._client is None:
            if self._dead or self._closing or self._group is None:
                raise ToolTransportError(self._dead or f"the tool server '{self.name}' is not started")
            await self._changed.wait()
        return self._client, self._generation

    def _lost(self, generation: int) -> None:
        """Called by a call that saw the connection drop; only the first caller per connection restarts it."""
        if generation == self._generation and self._client is not None:
            self._client = None
            self._wake.set()

    # ---- the ToolSource seam --------------------------------------------------------------------------------
    def transport_info(self) -> TransportInfo:
        return self._info

    async def list_tools(self) -> list[ToolSpec]:
        client, _ = await self._connected()
        specs: list[ToolSpec] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            specs += [_spec(tool, self.name) for tool in page.tools]
            cursor = page.next_cursor
            if not cursor:
                return specs

    async def call(
        self, name: str, arguments: dict[str, Any], *, call_id: str, timeout_s: float, idempotency_key: str | None
    ) -> ToolResult:
        client, generation = await self._connected()
        meta: types.RequestParamsMeta | None = (
            cast(types.RequestParamsMeta, {IDEMPOTENCY_KEY_META: idempotency_key}) if idempotency_key else None
        )
        started = time.perf_counter()
        try:
            result = await client.call_tool(name, arguments, read_timeout_seconds=timeout_s, meta=meta)
        except MCPError as exc:
            if exc.error.code == types.REQUEST_TIMEOUT:
                return failed(call_id, name, "timeout", errors.timed_out(name, timeout_s), since=started)
            if exc.error.code == types.CONNECTION_CLOSED:
                self._lost(generation)
                raise ToolTransportError(f"the tool server '{self.name}' closed the connection") from exc
            return failed(call_id, name, "tool_failed", errors.tool_failed(name, exc.error.message), since=started)
        except LOST as exc:
            self._lost(generation)
            raise ToolTransportError(f"the tool server '{self.name}' went away ({type(exc).__name__})") from exc
        return from_call_result(call_id, name, result, since=started)


def _spec(tool: types.Tool, source: str) -> ToolSpec:
    return ToolSpec(
        name=tool.name,
        description=tool.description or tool.title or tool.name,
        input_schema=tool.input_schema,
        policy=ToolPolicy.from_meta(tool.meta),
        source=source,
    )
