"""One MCP tool server as a ToolSource: a stdio command the run spawns and owns, or an HTTP URL with a bearer token
(a static one, or `auth=ClientCredentials(...)` for OAuth access tokens, see oauth_auth.py). A thin source on the
MCP connection kit (toolwire_shared/mcp_kit): its connection (mcp_connect.py) is kept up by a Supervisor, and its
tools/call is the call protocol of both eras (mcp_calls.py).

One owner task enters and exits each `mcp.Client` (anyio cancel scopes must be entered and left in the same task);
calls from any task share the session concurrently. When the server dies mid-run, the calls in flight get a
`ToolTransportError` and the owner reconnects as its restart policy says: a run's own server once (`OnceOnly`); a
shared connection (`restart_with`, called by shared_connections.py) within a sliding window with backoff, refusing a
run whose calls keep killing the server (`SlidingWindow`). A server that cannot be started or reached makes
`start()` raise `ToolServerFailed`, quoting a stdio server's own error line from its stderr.
"""

import logging
from contextlib import suppress
from functools import partial
from typing import Any, Literal, cast

import anyio
import httpx2
import mcp_types as types
import pydantic
from anyio.abc import TaskGroup, TaskStatus
from mcp import Client
from mcp.client.extension import advertise
from mcp.client.subscriptions import ResourcesListChanged, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolwire_client import texts
from toolwire_client.tools import tasks
from toolwire_client.tools.mcp_calls import CallProtocol
from toolwire_client.tools.mcp_connect import Connector
from toolwire_client.tools.mcp_live import LiveConnection
from toolwire_client.tools.server_asks import ServerAsks
from toolwire_client.tools.server_stderr import NOTE, ServerStderr
from toolwire_client.tools.source import (
    ServerRequestFailed,
    ToolRequest,
    ToolServerFailed,
    ToolSource,
    ToolTransportError,
    TransportInfo,
)
from toolwire_shared.mcp_kit.listing import every_page, repaired_tools_page
from toolwire_shared.mcp_kit.restarts import OnceOnly, RestartPolicy
from toolwire_shared.mcp_kit.supervisor import Supervisor
from toolwire_shared.results import ToolResult
from toolwire_shared.tools import IDEMPOTENCY_KEY_META, RUN_ID_META, ToolPolicy, ToolSpec

log = logging.getLogger("toolwire.client.mcp")

LISTEN_WAIT_S = 5.0
"""How long a start waits for the server's `subscriptions/listen` stream to open before it lists the tools (a server
that never opens it only delays the start)."""
START_TIMEOUT_S = 60.0
"""How long a server may take to answer MCP's initialize (spawn and import included) before the start has failed."""


class McpSource(ToolSource):
    """A ToolSource. Give either `command` (argv of a stdio server) or `url` (+ optional `token`)."""

    times_out_itself = False  # a server that hangs or dies never answers: the ToolBox's backstop ends the wait
    checks_output = False  # another process: its results are checked here
    offers_prompts = offers_resources = True

    def __init__(
        self,
        name: str,
        *,
        command: list[str] | None = None,
        url: str | None = None,
        token: str | None = None,
        auth: httpx2.Auth | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        max_restarts: int = 1,
        stderr: ServerStderr | None = None,
        start_timeout_s: float = START_TIMEOUT_S,
        mode: Literal["auto", "legacy"] = "auto",
        trusted: bool = False,
        use_instructions: bool = True,
        sampling: bool = False,
        roots: list[str] | None = None,
    ):
        if (command is None) == (url is None):
            raise ValueError("McpSource needs exactly one of command=[...] (stdio) or url='http://...' (HTTP)")
        if token and auth is not None:
            raise ValueError("McpSource takes a static token= or an auth= (OAuth), not both")
        self.auth = auth
        self.name, self.command, self.url, self.token = name, command, url, token
        self.env, self.cwd, self.max_restarts = env, cwd, max_restarts
        self.stderr = stderr or ServerStderr(name)
        """Where a stdio server's stderr goes (default: this process's stderr); its latest lines explain a failure."""
        self.start_timeout_s = start_timeout_s
        self.mode = mode
        """'auto': the 2026-07-28 era where the server speaks it; 'legacy': the initialize handshake (a session)."""
        self.trusted = trusted
        """The user trusts this server's tool annotations (ServerSpec.trust): see ToolPolicy.with_annotations."""
        self.use_instructions = use_instructions
        self.instructions: str | None = None
        """The server's `instructions` (initialize or server/discover), unless the user opted out; the loop joins
        them to a new run's system prompt."""
        self.tools_changed = False
        """Set when the server says its tool list changed (`notifications/tools/list_changed`, or a
        `subscriptions/listen` event in the 2026-07-28 era): the ToolBox lists this source again before the next
        model call."""
        self.tool_changes = 0
        """How many times the server said so: a shared connection's runs each note the count they listed at."""
        self.hears_tool_changes = False
        """Whether this connection now listens for them (a 2026-07-28 `subscriptions/listen` stream is open): only
        then may a listing be reused until the next change (tools/shared_connections.py)."""
        self.resource_changes, self.hears_resource_changes = 0, False
        """The same for the server's resource list."""
        self.asks = ServerAsks(name, sampling=sampling, roots=roots, note=self._note)
        """What the server may ask while a call runs: the run's model (MCP sampling, if allowed) and roots."""
        self._connector = Connector(self, self._client_options)
        self._supervisor = Supervisor(f"tool server '{name}'", OnceOnly(max_restarts))
        """Keeps the connection up as its policy says: once for a run's own server (`restart_with` changes it)."""
        self._live = LiveConnection(name, self._supervisor, running=lambda: self._group is not None)
        self._supervisor.on_change = self._live.notify
        self._calls = CallProtocol(name, self.asks, self._live.lost)
        self._started = False
        self._group: TaskGroup | None = None
        self._info = TransportInfo(transport="pipe" if command else "tcp")
        if url:
            parsed = httpx2.URL(url)
            self._info.server_address, self._info.server_port = parsed.host, parsed.port

    @property
    def restarts(self) -> int:
        """How many times the connection was made again."""
        return self._supervisor.restarts

    @property
    def restart_policy(self) -> RestartPolicy:
        return self._supervisor.policy

    def restart_with(self, policy: RestartPolicy, max_restarts: int) -> None:
        """Before `start()`: the restart policy of a connection many runs share (shared_connections.py)."""
        self._supervisor.policy, self.max_restarts = policy, max_restarts

    # ---- lifecycle: one owner task per session --------------------------------------------------------------
    async def start(self) -> None:
        self._started = False
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
        self._supervisor.close()
        group, self._group = self._group, None
        try:
            await group.__aexit__(None, None, None)  # no shield here: the group's scope must be the innermost one
        finally:
            self._connector.write_log(self._connector.log_budget.closing())

    async def _own(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        await self._supervisor.run(partial(self._connection, task_status), self._failed)

    async def _connection(self, task_status: TaskStatus[None]) -> None:
        """One connection, from its opening until it ends (a call saw it drop, or the source closes)."""
        try:
            async with self._connector.opened() as client:
                self._live.opened(client)
                self.asks.attach(client)
                self._info.protocol_version = client.protocol_version
                if self.use_instructions:
                    self.instructions = (client.instructions or "").strip() or None
                async with anyio.create_task_group() as listening:
                    changes = _announced_changes(client)
                    if any(changes):
                        heard = anyio.Event()
                        listening.start_soon(self._listen, client, heard, changes)
                        with anyio.move_on_after(LISTEN_WAIT_S):
                            await heard.wait()  # a change right after the first listing is not missed
                    self._supervisor.up()
                    self._live.notify()
                    if not self._started:
                        self._started = True
                        task_status.started()
                    await self._supervisor.wait_ended()
                    listening.cancel_scope.cancel()
        finally:
            self._live.client = None

    async def _failed(self, exc: Exception) -> None:
        """A connection that could not be made or ended with an error: a failed start before the first one served."""
        if not self._started:
            raise await self._connector.start_failure(exc) from exc
        log.warning("tool server %s: connection ended with %s: %s", self.name, type(exc).__name__, exc)

    async def _listen(self, client: Client, heard: anyio.Event, changes: tuple[bool, bool]) -> None:
        """A 2026-07-28 connection's `subscriptions/listen` stream for tool (and resource) list changes, while the
        connection lasts (handshake-era sessions get `notifications/tools/list_changed` through `_on_message`
        instead); `heard` is set once it is open, or could not be."""
        try:
            tools, resources = changes
            async with client.listen(tools_list_changed=tools, resources_list_changed=resources) as events:
                honored = events.honored  # what the server acknowledged it will send
                self.hears_tool_changes = bool(honored and honored.tools_list_changed)
                self.hears_resource_changes = bool(honored and honored.resources_list_changed)
                heard.set()
                async for event in events:
                    if isinstance(event, ToolsListChanged):
                        self._heard_tool_change()
                    elif isinstance(event, ResourcesListChanged):
                        self.resource_changes += 1
        except Exception as exc:  # the connection's own failures are seen by its calls; this only stops listening
            self._note(texts.tool_changes_unheard(self.name, f"{type(exc).__name__}: {exc}"))
        finally:
            self.hears_tool_changes = self.hears_resource_changes = False
            heard.set()

    def _heard_tool_change(self) -> None:
        self.tools_changed = True
        self.tool_changes += 1

    async def _on_message(self, message: object) -> None:
        """What the server sends unasked: a handshake-era tool list change is noted (the rest the SDK handles)."""
        if isinstance(message, types.ToolListChangedNotification):
            self._heard_tool_change()

    def _client_options(self) -> dict[str, Any]:
        """This source's `mcp.Client` handlers for what the server sends unasked, and the capabilities it offers."""
        return {
            "message_handler": self._on_message,
            "elicitation_callback": self._calls.questions.callback,
            "extensions": [advertise(tasks.EXTENSION)],  # a server may answer a call with a task: tasks.py follows it
            **self.asks.client_options(),
        }

    @property
    def tools_at(self) -> tuple[int, int]:
        """(which connection this is, how many tool changes were heard): a listing made at an equal pair is still
        the server's list, as long as the connection `hears_tool_changes`."""
        return self._live.generation, self.tool_changes

    @property
    def resources_at(self) -> tuple[int, int]:
        return self._live.generation, self.resource_changes

    # ---- the ToolSource seam --------------------------------------------------------------------------------
    def transport_info(self) -> TransportInfo:
        return self._info

    async def list_tools(self) -> list[ToolSpec]:
        """Every tool the server lists (all pages). A read, so on a shared connection one that dropped under it is
        asked again once it is made again: a shared connection's drop must not fail the runs that were only starting
        on it. A server that cannot list its tools has failed its start (ToolServerFailed: its own error message, or
        what it wrote on stderr before it went away); a tool whose listing breaks MCP's schema is skipped with a note,
        and the others are listed."""
        shared = self.restart_policy.shared
        self._live.first_listing = not shared and self._live.generation == 1
        try:
            try:
                return await self._list_tools()
            except ToolTransportError:
                if not shared:
                    raise
                return await self._list_tools()
        except ToolTransportError as exc:
            raise await self._connector.listing_lost(exc) from exc
        except ServerRequestFailed as exc:
            raise ToolServerFailed(
                self.name, self._connector.target(), "list_failed", "answered tools/list with an error", exc.said
            ) from exc
        finally:
            self._live.first_listing = False

    async def _list_tools(self) -> list[ToolSpec]:
        async def page(cursor: str | None) -> types.ListToolsResult:
            try:
                return await self._live.ask("tools/list", partial(Client.list_tools, cursor=cursor))
            except pydantic.ValidationError:
                repaired = partial(repaired_tools_page, cursor=cursor, skipped=self._skipped_tool)
                return await self._live.ask("tools/list", repaired)  # asked again, checked tool by tool

        specs: list[ToolSpec] = []
        listed = await self._live.bounded("tools/list", every_page(page, lambda listed: listed.tools, "tools"))
        for tool in listed:
            client = self._live.client
            if tasks.only_as_legacy_task(tool) and client is not None:
                if not tasks.runs_legacy_tasks(client.server_capabilities):
                    self._note(texts.tool_needs_tasks(self.name, tool.name))  # shown with `toolwire run -v`
                    continue
                self._calls.legacy_task_tools.add(tool.name)  # called with `params.task`, followed (tools/tasks.py)
            specs.append(_spec(tool, self.name, self.trusted))
        return specs

    def _skipped_tool(self, tool: str, problem: str) -> None:
        self._note(texts.tool_listing_skipped(self.name, tool, problem))

    def _note(self, text: str) -> None:
        """A note of toolwire's on this server (beside its stderr: with `toolwire run -v`, inline; else in the run's
        server log), and in the log."""
        log.info("%s", text)
        with suppress(Exception):
            self.stderr.sink(self.name, NOTE + text)

    async def call(self, request: ToolRequest) -> ToolResult:
        run_id = request.run.run_id  # the calling run's: a connection may be shared by many (shared_connections.py)
        policy = self.restart_policy
        refused = policy.refusal(run_id, self.name)
        if refused is not None:
            raise ToolTransportError(refused)
        client, generation = await self._live.connected()
        ours = {IDEMPOTENCY_KEY_META: request.idempotency_key, RUN_ID_META: run_id}
        meta = cast(types.RequestParamsMeta, {k: v for k, v in ours.items() if v})
        in_flight = self._live.in_flight
        in_flight[run_id] += 1
        try:
            with self.asks.running(request):
                result = await self._calls.call(client, generation, request, meta)
        finally:
            in_flight[run_id] -= 1
            if not in_flight[run_id]:
                del in_flight[run_id]
        policy.answered(run_id)
        return result

    # ---- prompts and resources: thin, typed, a server's refusal as one readable line ------------------------
    async def list_mcp_tools(self) -> list[types.Tool]:
        """Every tool as the server lists it (all pages), annotations and all: what `toolwire tools` shows."""
        return await self._live.all_pages("tools/list", Client.list_tools, lambda page: page.tools)

    async def list_prompts(self) -> list[types.Prompt]:
        """Every prompt the server lists (all pages); none when it offers no prompts."""
        return await self._live.all_pages("prompts/list", Client.list_prompts, lambda page: page.prompts)

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> types.GetPromptResult:
        return await self._live.ask("prompts/get", lambda c: c.get_prompt(name, arguments))

    async def list_resources(self) -> list[types.Resource]:
        """Every resource the server lists (all pages); none when it offers no resources."""
        return await self._live.all_pages("resources/list", Client.list_resources, lambda page: page.resources)

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        return await self._live.ask("resources/read", lambda c: c.read_resource(uri))


def _announced_changes(client: Client) -> tuple[bool, bool]:
    """Whether a 2026-07-28 connection's server says its tool list, and its resource list, may change (the only way
    to hear it is to listen)."""
    if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False, False
    tools, resources = client.server_capabilities.tools, client.server_capabilities.resources
    return bool(tools and tools.list_changed), bool(resources and resources.list_changed)


def _spec(tool: types.Tool, source: str, trusted: bool = False) -> ToolSpec:
    """A listed tool as a ToolSpec: toolwire's own policy from its `_meta`, the MCP annotations as hints beside it
    (ToolPolicy.with_annotations; the decisions on them are calls.py's)."""
    hints = tool.annotations
    policy = ToolPolicy.from_meta(tool.meta).with_annotations(
        read_only=hints.read_only_hint if hints else None,
        destructive=hints.destructive_hint if hints else None,
        idempotent=hints.idempotent_hint if hints else None,
        trusted=trusted,
    )
    return ToolSpec(
        name=tool.name,
        description=tool.description or tool.title or tool.name,
        input_schema=tool.input_schema,
        output_schema=tool.output_schema,
        policy=policy,
        source=source,
    )
