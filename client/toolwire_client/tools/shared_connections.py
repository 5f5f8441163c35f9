"""One MCP connection for many runs. Inside `async with SharedConnections():`, the runs of this process whose tool
server and identity are the same (stdio: command, env, cwd; HTTP: URL and bearer token) use one McpSource, so one
stdio server process or one HTTP connection pool, where each run would otherwise open its own. `build_sources`
hands out leases on the pool's connections while a pool is active (a contextvar: tasks started inside inherit it).
`SharedConnections(process_wide=True)` also serves tasks that do not inherit it, as long as they run on the pool's
event loop: the `toolwire worker`'s DBOS workflows, which DBOS starts from its queue thread.

Each call still says whose it is: McpSource.call runs in the calling run's task and puts that run's id and the
call's idempotency key in the request's `_meta`, and the SDK adds the task's trace context (`traceparent`). A
dropped connection is made again by its McpSource, at most `max_restarts` times in any `restart_window_s` with an
exponential backoff between (the kit's SlidingWindow, toolwire_shared/mcp_kit/restarts.py: the window slides, so
the connection recovers by itself), and every run goes on on the new one; a run that had a call in flight at
`strikes` drops in a row is refused further calls on it, so one run whose calls kill the server cannot take it from
the others. The drop is noticed by the call that meets it: that call (in flight then, or the first one sent after a
server died while idle) gets a transport error, which the ToolBox sends again only for an idempotent tool; a run
whose call comes after the new connection never sees the drop.

A connection no run has leased for `idle_close_s` is closed (a long-lived worker whose runs each name their own
stdio server, e.g. with a per-run env, would otherwise keep one server process per run ever seen); the next lease
on it opens it again. The connections belong to the pool, not to a run: each one is started and closed by its own
owner task in the pool's task group (anyio's cancel scopes must be left by the task that entered them), and closed
when the pool ends. Not shared: OAuth sources (their token cache is per source), stdio ones under `stdio=False`, and
sources made outside `build_sources`."""

from collections.abc import Awaitable, Callable, Hashable
from contextvars import ContextVar, Token
from typing import Any, Generic, TypeVar

import anyio
import mcp_types as types
from anyio.abc import TaskGroup

from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.source import ToolRequest, ToolSource, TransportInfo
from toolwire_shared.mcp_kit.restarts import SlidingWindow
from toolwire_shared.results import ToolResult
from toolwire_shared.tools import ToolSpec

DEFAULT_MAX_RESTARTS = 10
"""Reconnections a shared connection may make in any `restart_window_s` (a run's own connection makes one)."""
DEFAULT_RESTART_WINDOW_S = 60.0
DEFAULT_STRIKES = 3
"""Drops in a row a run may have a call in flight at before it gets no more calls on the connection."""
DEFAULT_MAX_IN_FLIGHT = 100
"""Requests one shared connection has on the wire at once (httpx's own pool opens at most 100 connections). A call
past it waits in its run's task, which costs a suspended coroutine, not a request, a response stream and an SDK
task: what keeps 10,000 runs on one connection in 50 KiB each."""
DEFAULT_IDLE_CLOSE_S = 60.0
"""How long a connection stays open with no run holding a lease on it."""

L = TypeVar("L")
_active: ContextVar["SharedConnections | None"] = ContextVar("toolwire_shared_connections", default=None)
_process_wide: "SharedConnections | None" = None


def active_pool() -> "SharedConnections | None":
    """The pool this task is inside, else the process-wide one (if any)."""
    return _active.get() or _process_wide


class _Listing(Generic[L]):
    """One listing of a shared connection (its tools, its resources): asked of the server once per point of the
    connection (`McpSource.tools_at`: which connection, how many changes heard) while the connection hears its
    changes, and shared by the runs that ask at that point, those that ask at once too; else asked for each run."""

    def __init__(self) -> None:
        self.value: L | None = None
        self.at: tuple[int, int] | None = None
        self._flight: tuple[tuple[int, int], anyio.Event] | None = None

    async def get(self, at: tuple[int, int], hears: bool, ask: Callable[[], Awaitable[L]]) -> L:
        if hears and self._flight is not None and self._flight[0] == at:
            await self._flight[1].wait()  # another run's listing at the same point: its answer is ours
        if hears and self.at == at and self.value is not None:
            return self.value
        done = anyio.Event()
        if hears:
            self._flight = (at, done)
        try:
            value = await ask()
            self.value, self.at = value, at if hears else None
            return value
        finally:
            done.set()
            if self._flight is not None and self._flight[1] is done:
                self._flight = None


class _Connection:
    def __init__(self, source: McpSource, max_in_flight: int) -> None:
        self.source = source
        self.ready = anyio.Event()
        self.failure: BaseException | None = None
        self.in_flight = anyio.CapacityLimiter(max_in_flight)
        self.leases = 0
        self.unused_since = anyio.current_time()
        self.tools = _Listing[list[ToolSpec]]()
        self.resources = _Listing[list[types.Resource]]()

    async def listed_tools(self) -> list[ToolSpec]:
        """The server's tools, as the last listing's (frozen) specs when they are equal to it: every run of the same
        tools holds the same objects, where each would hold its own copy."""
        specs = await self.source.list_tools()
        return self.tools.value if specs == self.tools.value and self.tools.value is not None else specs


class SharedConnections:
    def __init__(
        self,
        max_restarts: int = DEFAULT_MAX_RESTARTS,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        *,
        idle_close_s: float = DEFAULT_IDLE_CLOSE_S,
        process_wide: bool = False,
        stdio: bool = True,
        restart_window_s: float = DEFAULT_RESTART_WINDOW_S,
        strikes: int = DEFAULT_STRIKES,
        backoff_s: float = 0.1,
    ) -> None:
        self.max_restarts, self.max_in_flight, self.process_wide = max_restarts, max_in_flight, process_wide
        self.restart_window_s, self.strikes, self.backoff_s = restart_window_s, strikes, backoff_s
        self.idle_close_s, self.stdio = idle_close_s, stdio
        """`stdio=False`: HTTP connections only, each run keeps its own stdio server (`toolwire eval`: an attempt's
        server state stays its own, where sharing an HTTP connection changes nothing the server keeps)."""
        self._connections: dict[Hashable, _Connection] = {}
        self._group: TaskGroup | None = None
        self._closing = anyio.Event()
        self._token: Token[SharedConnections | None] | None = None

    async def __aenter__(self) -> "SharedConnections":
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._token = _active.set(self)
        if self.process_wide:
            global _process_wide
            if _process_wide is not None:
                raise RuntimeError("a process-wide SharedConnections is already active")
            _process_wide = self
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        global _process_wide
        assert self._group is not None and self._token is not None
        _active.reset(self._token)
        if _process_wide is self:
            _process_wide = None
        self._closing.set()  # every owner closes its connection; the group waits for them
        return await self._group.__aexit__(*exc)

    def shares(self, source: McpSource) -> bool:
        """Whether `source` goes through the pool: not OAuth (its token cache is per source), nor stdio when off."""
        return source.auth is None and (self.stdio or source.command is None)

    def lease(self, source: McpSource) -> "SharedLease":
        """A ToolSource named as `source` on the pool's connection to the same server as the same caller; `source`
        itself becomes that connection if there is none yet."""
        key = (tuple(source.command or ()), source.url, source.token, tuple(sorted((source.env or {}).items())))
        # trust: how tools list; asks: the capabilities the connection advertises
        return SharedLease(self, source, (*key, source.cwd, source.mode, source.trusted, source.asks.key))

    @property
    def connections(self) -> int:
        """How many connections are open (or opening)."""
        return len(self._connections)

    async def _acquire(self, key: Hashable, source: McpSource) -> _Connection:
        connection = self._connections.get(key)
        if connection is None:
            assert self._group is not None, "the pool is not entered"
            window = SlidingWindow(
                self.max_restarts, self.restart_window_s, backoff_s=self.backoff_s, strikes=self.strikes
            )
            source.restart_with(window, self.max_restarts)
            connection = self._connections[key] = _Connection(source, self.max_in_flight)
            self._group.start_soon(self._own, key, connection)
        connection.leases += 1  # before any wait: an idle close never takes a connection a lease is waiting for
        try:
            await connection.ready.wait()
            if connection.failure is not None:
                raise connection.failure
        except BaseException:
            self._release(connection)
            raise
        return connection

    def _release(self, connection: _Connection) -> None:
        connection.leases -= 1
        if connection.leases == 0:
            connection.unused_since = anyio.current_time()

    async def _own(self, key: Hashable, connection: _Connection) -> None:
        try:
            await connection.source.start()
        except Exception as exc:  # this lease's start fails with it; a later lease tries afresh
            connection.failure = exc
            del self._connections[key]
            connection.ready.set()
            return
        connection.ready.set()
        try:
            while not self._closing.is_set():
                with anyio.move_on_after(self.idle_close_s / 2):
                    await self._closing.wait()
                idle = connection.leases == 0 and anyio.current_time() - connection.unused_since >= self.idle_close_s
                if idle and self._connections.get(key) is connection:
                    del self._connections[key]  # in the same step as the check: no lease can take it from here on
                    break
        finally:
            await connection.source.aclose()  # not shielded: McpSource's own group must be the innermost scope


class SharedLease(ToolSource):
    """A ToolSource: one run's use of a shared connection. Closing it leaves the connection open."""

    offers_prompts = offers_resources = True

    def __init__(self, pool: SharedConnections, source: McpSource, key: Hashable) -> None:
        self.pool, self.name, self.key = pool, source.name, key
        self._offered: McpSource | None = source
        """Becomes the connection if there is none yet; let go once started (a run holds only its lease)."""
        self._connection: _Connection | None = None
        self._seen_changes = 0

    @property
    def shared(self) -> McpSource:
        if self._connection is None:
            raise RuntimeError(f"the tool source '{self.name}' is not started")
        return self._connection.source

    async def start(self) -> None:
        if self._offered is None:
            raise RuntimeError(f"the lease on tool source '{self.name}' was already started once")
        self._connection = await self.pool._acquire(self.key, self._offered)
        self._offered = None

    async def aclose(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            self.pool._release(connection)

    @property
    def tools_changed(self) -> bool:
        """The server said its tool list changed since this run's last listing (the ToolBox lists it again)."""
        return self._connection is not None and self.shared.tool_changes != self._seen_changes

    @tools_changed.setter
    def tools_changed(self, value: bool) -> None:
        if not value and self._connection is not None:
            self._seen_changes = self.shared.tool_changes

    async def list_tools(self) -> list[ToolSpec]:
        """The connection's listing (`_Listing`): once per connection and tool change when the connection hears
        changes (a 2026-07-28 `subscriptions/listen` stream), else once per run, as an unshared source."""
        source, connection = self.shared, self._connection
        assert connection is not None
        at = source.tools_at
        self._seen_changes = at[1]
        specs = await connection.tools.get(at, source.hears_tool_changes, connection.listed_tools)
        return [spec if spec.source == self.name else spec.model_copy(update={"source": self.name}) for spec in specs]

    async def call(self, request: ToolRequest) -> ToolResult:
        source = self.shared
        assert self._connection is not None
        async with self._connection.in_flight:  # the wait counts against the call's timeout, as any queue would
            return await source.call(request)

    def transport_info(self) -> TransportInfo:
        return self.shared.transport_info()

    # prompts and resources, as McpSource offers them (a lease is a PromptSource like the source it shares)
    async def list_prompts(self) -> list[types.Prompt]:
        return await self.shared.list_prompts()

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> types.GetPromptResult:
        return await self.shared.get_prompt(name, arguments)

    async def list_resources(self) -> list[types.Resource]:
        """As `list_tools`: once per connection and resource change when the connection hears them."""
        source, connection = self.shared, self._connection
        assert connection is not None
        return await connection.resources.get(source.resources_at, source.hears_resource_changes, source.list_resources)

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        return await self.shared.read_resource(uri)
