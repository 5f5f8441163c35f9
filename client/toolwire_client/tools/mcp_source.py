"""One MCP tool server as a ToolSource: a stdio command the run spawns and owns, or an HTTP URL with a bearer token
(a static one, or `auth=ClientCredentials(...)` for OAuth access tokens, see oauth_auth.py).

One owner task enters and exits each `mcp.Client` (anyio cancel scopes must be entered and left in the same task);
calls from any task share the session concurrently. When the server dies mid-run, the calls in flight get a
`ToolTransportError` and the owner reconnects once (a stdio server is spawned again); a shared connection
(`restart_window`, set by shared_connections.py) reconnects within a sliding window with backoff, and refuses a run
whose calls keep killing the server (restarts.py). A server that cannot be started
or reached makes `start()` raise `ToolServerFailed`, quoting a stdio server's own error line from its stderr.
"""

import json
import logging
import math
import shlex
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from functools import partial
from typing import Any, Literal, TextIO, TypeVar, cast

import anyio
import httpx2
import mcp_types as types
import pydantic
from anyio.abc import TaskGroup, TaskStatus
from mcp import Client, MCPError, StdioServerParameters
from mcp.client._input_required import InputRequiredRoundsExceededError
from mcp.client._transport import Transport, TransportStreams
from mcp.client.extension import advertise
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourcesListChanged, ToolsListChanged
from mcp_types.methods import validate_server_result
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolwire_client import texts
from toolwire_client.tools import tasks
from toolwire_client.tools.elicitation import (
    MAX_ROUNDS,
    PushedQuestions,
    TaskQuestions,
    paused,
    saved_answer,
    wanted_of,
    wire_answer,
)
from toolwire_client.tools.oauth_auth import TokenRequestFailed
from toolwire_client.tools.restarts import RestartWindow
from toolwire_client.tools.server_asks import ServerAsks
from toolwire_client.tools.server_logs import LogBudget
from toolwire_client.tools.server_stderr import NOTE, ServerStderr, error_line
from toolwire_client.tools.source import (
    ServerRequestFailed,
    StartFailure,
    ToolRequest,
    ToolServerFailed,
    ToolTransportError,
    TransportInfo,
)
from toolwire_shared import errors
from toolwire_shared.elicitation import CALL_TAG_META
from toolwire_shared.results import ToolResult, failed, from_call_result
from toolwire_shared.tls import ssl_context
from toolwire_shared.tools import IDEMPOTENCY_KEY_META, RUN_ID_META, ToolPolicy, ToolSpec

log = logging.getLogger("toolwire.client.mcp")
E = TypeVar("E", bound=BaseException)
R = TypeVar("R")
Page = TypeVar("Page", types.ListPromptsResult, types.ListResourcesResult, types.ListToolsResult)
Item = TypeVar("Item")

LISTEN_WAIT_S = 5.0
"""How long a start waits for the server's `subscriptions/listen` stream to open before it lists the tools (a server
that never opens it only delays the start)."""
LOST = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError, httpx2.TransportError)
"""What a dropped connection looks like from inside call_tool."""
SDK_HTTP_ERROR = "Server returned an error response"
"""mcp.client.streamable_http's message for a POST answered with an error status and no JSON-RPC error."""
LOG_LEVEL: types.LoggingLevel = "info"
"""The server log messages asked for in the 2026-07-28 era (a handshake-era server sends what it sends)."""
CallRound = types.CallToolResult | types.InputRequiredResult
CALL_ROUND: pydantic.TypeAdapter[CallRound] = pydantic.TypeAdapter(CallRound)
"""A tools/call's answer: its result, or (2026-07-28) the input it needs first (server_asks.py answers it)."""
START_TIMEOUT_S = 60.0
"""How long a server may take to answer MCP's initialize (spawn and import included) before the start has failed."""


class McpSource:
    """Implements ToolSource. Give either `command` (argv of a stdio server) or `url` (+ optional `token`)."""

    times_out_itself = False  # a server that hangs or dies never answers: the ToolBox's backstop ends the wait

    checks_output = False  # another process: its results are checked here

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
        self._log_budget = LogBudget()
        """How much of the server's log messages goes there (server_logs.py)."""
        self.start_timeout_s = start_timeout_s
        self.mode = mode
        self.trusted = trusted
        """The user trusts this server's tool annotations (ServerSpec.trust): see ToolPolicy.with_annotations."""
        """'auto': the 2026-07-28 era where the server speaks it; 'legacy': the initialize handshake (a session)."""
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
        self._http_error: str | None = None
        self._spawn_ok = False
        self._first_listing = False
        """True while a run's own server lists its tools the first time: a drop then is a failed start, not a crash
        to restart it for."""
        self.restarts = 0
        self.restart_window: RestartWindow | None = None
        """None: at most `max_restarts` in the source's life (a run's own server). Else the shared connection's."""
        self._in_flight: Counter[str] = Counter()
        """Run id -> its calls on the wire: who is blamed when the connection drops."""
        self._paused: str | None = None
        self._client: Client | None = None
        self._generation = 0
        self._dead: str | None = None
        self._closing = False
        self._changed = anyio.Event()
        self._wake = anyio.Event()
        self._group: TaskGroup | None = None
        self._info = TransportInfo(transport="pipe" if command else "tcp")
        self._questions = PushedQuestions()
        """Handshake-era questions (`elicitation/create`) routed to the call that asks (tools/elicitation.py)."""
        self._legacy_task_tools: set[str] = set()
        """Tools a handshake-era server runs only as 2025-11-25 tasks (it said it runs them)."""
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
        try:
            await group.__aexit__(None, None, None)  # no shield here: the group's scope must be the innermost one
        finally:
            self._write_log(self._log_budget.closing())

    async def _own(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        started = False
        while True:
            self._wake = anyio.Event()
            try:
                async with self._opened() as client:
                    self._client, self._generation = client, self._generation + 1
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
                        self._notify()
                        if not started:
                            started = True
                            task_status.started()
                        await self._wake.wait()
                        listening.cancel_scope.cancel()
            except Exception as exc:
                if not started:
                    raise await self._start_failure(exc) from exc
                log.warning("tool server %s: connection ended with %s: %s", self.name, type(exc).__name__, exc)
            self._client = None
            if self._closing:
                self._notify()
                return
            if self._dead:
                self._notify()
                return
            if self.restart_window is None:
                if self.restarts >= self.max_restarts:
                    self._dead = (
                        f"the tool server '{self.name}' stopped and was already restarted {self.restarts} time(s)"
                    )
                    self._notify()
                    return
            elif not await self._backed_off(self.restart_window):
                self._notify()
                return
            self.restarts += 1
            log.warning("tool server %s: restarting (%d of %d)", self.name, self.restarts, self.max_restarts)

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

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        """A server's log message (MCP logging) goes where its stderr goes: the run's server log, or inline with
        `-v`, under the server's name (over HTTP too, where there is no stderr)."""
        data = params.data if isinstance(params.data, str) else json.dumps(params.data, default=str)
        where = f" {params.logger}" if params.logger else ""
        self._write_log(self._log_budget.admit(f"[{params.level}{where}] {data}"))

    def _write_log(self, lines: list[str]) -> None:
        for line in lines:
            with suppress(Exception):
                self.stderr.sink(self.name, line)

    def _client_on(self, transport: Transport) -> Client:
        """The SDK's Client on `transport`, with this source's handlers for what the server sends unasked."""
        return Client(
            transport,
            mode=self.mode,
            cache=None,
            logging_callback=self._on_log,
            message_handler=self._on_message,
            elicitation_callback=self._questions.callback,
            log_level=LOG_LEVEL,
            extensions=[advertise(tasks.EXTENSION)],  # a server may answer a call with a task: tasks.py follows it
            **self.asks.client_options(),
        )

    async def _backed_off(self, window: RestartWindow) -> bool:
        """Wait until the window allows a restart (callers wait through a backoff, and fail at once while the window
        is full); False when the source is closed meanwhile."""
        wait, full = window.delay(anyio.current_time())
        if full:
            self._paused = (
                f"the tool server '{self.name}' stopped {window.in_window()} times in the last {window.window_s:g} s; "
                f"it is started again in {wait:.0f} s"
            )
            log.warning("tool server %s: %s", self.name, self._paused)
            self._notify()
        self._wake = anyio.Event()
        with anyio.move_on_after(wait):
            await self._wake.wait()  # aclose() wakes it
        self._paused = None
        window.restarted(anyio.current_time())
        return not self._closing

    @asynccontextmanager
    async def _opened(self) -> AsyncIterator[Client]:
        """`_open` with its start bounded: a server that never answers initialize is a failed start."""
        with anyio.CancelScope(deadline=anyio.current_time() + self.start_timeout_s) as starting:
            async with self._open() as client:
                starting.deadline = math.inf
                yield client
        if starting.cancelled_caught:
            raise TimeoutError(f"did not answer MCP's initialize within {self.start_timeout_s:g} s")

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[Client]:
        if self.command is not None:
            params = StdioServerParameters(command=self.command[0], args=self.command[1:], env=self.env, cwd=self.cwd)
            async with (
                self.stderr.pipe() as errlog,
                self._client_on(self._spawned(params, errlog)) as client,
            ):
                yield client
            return
        assert self.url is not None
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        hooks = {"response": [self._note_http_error]}
        async with (
            httpx2.AsyncClient(
                headers=headers,
                auth=self.auth,
                timeout=httpx2.Timeout(30.0, read=None),
                event_hooks=hooks,
                verify=ssl_context(),
            ) as http,
            self._client_on(streamable_http_client(self.url, http_client=http)) as client,
        ):
            yield client

    @asynccontextmanager
    async def _spawned(self, params: StdioServerParameters, errlog: TextIO) -> AsyncIterator[TransportStreams]:
        """The SDK's stdio transport with the server's stderr on our pipe; our copy of its write end is closed once
        the server holds its own, so the pipe ends when the server does."""
        self._spawn_ok = False
        async with stdio_client(params, errlog=errlog) as streams:
            self._spawn_ok = True
            errlog.close()
            yield streams

    async def _note_http_error(self, response: httpx2.Response) -> None:
        """The status line of a refusal, and the JSON-RPC error's message when the server wrote one in its body."""
        if response.status_code >= 400:
            self._http_error = f"HTTP {response.status_code} {response.reason_phrase}".strip()
            if response.headers.get("content-type", "").startswith("application/json"):
                await response.aread()  # kept: the SDK reads the same body after this hook
                message = _jsonrpc_error_message(response.content)
                if message:
                    self._http_error += f": {errors.clip(message, 1000)}"

    async def _start_failure(self, exc: Exception) -> ToolServerFailed:
        """What went wrong at start-up, in the server's own words where it had some."""
        if self.command is not None:
            target = shlex.join(self.command)
            spawn = None if self._spawn_ok else _first(exc, OSError)
            if spawn is not None:
                kind: StartFailure = "no_command" if isinstance(spawn, FileNotFoundError) else "failed"
                missing = spawn.filename or self.command[0]
                return ToolServerFailed(self.name, target, kind, f"cannot be started: {spawn.strerror}: {missing}")
            said = error_line(await self.stderr.latest())
            if _first(exc, TimeoutError) is not None:
                return ToolServerFailed(self.name, target, "timeout", str(_first(exc, TimeoutError)), said)
            reason = "stopped before it answered MCP's initialize" + ("" if said else ", with nothing on stderr")
            return ToolServerFailed(self.name, target, "exited", reason, said)
        target = str(self.url)
        no_token = _first(exc, TokenRequestFailed)
        if no_token is not None:
            return ToolServerFailed(self.name, target, "refused", "got no access token", str(no_token))
        if _first(exc, TimeoutError) is not None:
            return ToolServerFailed(self.name, target, "timeout", str(_first(exc, TimeoutError)))
        unreachable = _first(exc, httpx2.TransportError)
        if unreachable is not None:
            refused = _first(exc, ConnectionRefusedError)
            said = "connection refused" if refused is not None else str(unreachable) or type(unreachable).__name__
            return ToolServerFailed(self.name, target, "unreachable", "cannot be reached", said)
        if self._http_error is not None:
            status = self._http_error
            kind = "not_found" if " 404" in status else "refused" if status[5:8] in ("401", "403") else "failed"
            return ToolServerFailed(self.name, target, kind, "refused MCP's initialize", status)
        return ToolServerFailed(self.name, target, "failed", "failed MCP's initialize", str(exc) or type(exc).__name__)

    def _notify(self) -> None:
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    async def _connected(self) -> tuple[Client, int]:
        while self._client is None:
            if self._dead or self._paused or self._closing or self._group is None:
                raise ToolTransportError(self._dead or self._paused or f"the tool server '{self.name}' is not started")
            await self._changed.wait()
        return self._client, self._generation

    def _lost(self, generation: int) -> None:
        """Called by a call that saw the connection drop; only the first caller per connection restarts it."""
        if generation == self._generation and self._client is not None:
            self._client = None
            if self._first_listing:
                self._dead = f"the tool server '{self.name}' stopped before it listed its tools"
            if self.restart_window is not None:
                for run_id in self.restart_window.crashed(self._in_flight):
                    log.warning("tool server %s: run %s gets no more restarts of it", self.name, run_id)
            self._wake.set()

    @property
    def tools_at(self) -> tuple[int, int]:
        """(which connection this is, how many tool changes were heard): a listing made at an equal pair is still
        the server's list, as long as the connection `hears_tool_changes`."""
        return self._generation, self.tool_changes

    @property
    def resources_at(self) -> tuple[int, int]:
        return self._generation, self.resource_changes

    # ---- the ToolSource seam --------------------------------------------------------------------------------
    def transport_info(self) -> TransportInfo:
        return self._info

    async def list_tools(self) -> list[ToolSpec]:
        """Every tool the server lists (all pages). A read, so on a shared connection one that dropped under it is
        asked again once it is made again: a shared connection's drop must not fail the runs that were only starting
        on it. A server that cannot list its tools has failed its start (ToolServerFailed: its own error message, or
        what it wrote on stderr before it went away); a tool whose listing breaks MCP's schema is skipped with a note,
        and the others are listed."""
        self._first_listing = self.restart_window is None and self._generation == 1
        try:
            try:
                return await self._list_tools()
            except ToolTransportError:
                if self.restart_window is None:
                    raise
                return await self._list_tools()
        except ToolTransportError as exc:
            raise await self._listing_lost(exc) from exc
        except ServerRequestFailed as exc:
            raise ToolServerFailed(
                self.name, self._target(), "list_failed", "answered tools/list with an error", exc.said
            ) from exc
        finally:
            self._first_listing = False

    async def _list_tools(self) -> list[ToolSpec]:
        specs: list[ToolSpec] = []
        cursor: str | None = None
        while True:
            try:
                page = await self._ask("tools/list", partial(Client.list_tools, cursor=cursor))
            except pydantic.ValidationError:
                page = await self._ask("tools/list", partial(self._valid_tools, cursor=cursor))
            for tool in page.tools:
                if tasks.only_as_legacy_task(tool) and self._client is not None:
                    if not tasks.runs_legacy_tasks(self._client.server_capabilities):
                        self._note(texts.tool_needs_tasks(self.name, tool.name))  # shown with `toolwire run -v`
                        continue
                    self._legacy_task_tools.add(tool.name)  # called with `params.task`, followed (tools/tasks.py)
                specs.append(_spec(tool, self.name, self.trusted))
            cursor = page.next_cursor
            if not cursor:
                return specs

    async def _valid_tools(self, client: Client, cursor: str | None) -> types.ListToolsResult:
        """A page of tools/list that failed MCP's schema, asked again and checked tool by tool (as the SDK checks
        the page, for the session's protocol version): a broken tool is skipped and named with its field, so the
        server's other tools still work."""
        params = {"cursor": cursor} if cursor else None
        raw = await client.session._dispatcher.send_raw_request("tools/list", params, {})  # the unchecked page
        version = client.protocol_version or "2025-11-25"
        tools: list[types.Tool] = []
        for item in raw.get("tools") or []:
            try:
                validate_server_result("tools/list", version, {"tools": [item]})
                tools.append(types.Tool.model_validate(item))
            except pydantic.ValidationError as exc:
                self._note(texts.tool_listing_skipped(self.name, _tool_name(item), _schema_problem(exc)))
        next_cursor = raw.get("nextCursor")
        page = types.ListToolsResult(tools=tools, next_cursor=next_cursor if isinstance(next_cursor, str) else None)
        return client.session._absorb_tool_listing(page, complete=cursor is None and page.next_cursor is None)

    def _note(self, text: str) -> None:
        """A note of toolwire's on this server (beside its stderr: with `toolwire run -v`, inline; else in the run's
        server log), and in the log."""
        log.info("%s", text)
        with suppress(Exception):
            self.stderr.sink(self.name, NOTE + text)

    def _target(self) -> str:
        return shlex.join(self.command) if self.command is not None else str(self.url)

    async def _listing_lost(self, exc: ToolTransportError) -> ToolServerFailed:
        """The connection ended after initialize, before the server listed its tools: in its own words where a stdio
        server wrote some on stderr."""
        if self.command is None:
            reason = "closed the connection after MCP's initialize"
            return ToolServerFailed(self.name, self._target(), "dropped", reason, str(exc))
        said = error_line(await self.stderr.latest())
        reason = "exited after MCP's initialize, before it listed its tools"
        reason += "" if said else ", with nothing on stderr"
        return ToolServerFailed(self.name, self._target(), "dropped", reason, said)

    async def call(self, request: ToolRequest) -> ToolResult:
        run_id = request.run.run_id  # the calling run's: a connection may be shared by many (shared_connections.py)
        refused = self.restart_window.refusal(run_id, self.name) if self.restart_window else None
        if refused is not None:
            raise ToolTransportError(refused)
        client, generation = await self._connected()
        send = partial(self._call, client, generation, request)
        ours = {IDEMPOTENCY_KEY_META: request.idempotency_key, RUN_ID_META: run_id}
        meta = cast(types.RequestParamsMeta, {k: v for k, v in ours.items() if v})
        self._in_flight[run_id] += 1
        try:
            with self.asks.running(request):
                result = await send(meta)
        finally:
            self._in_flight[run_id] -= 1
            if not self._in_flight[run_id]:
                del self._in_flight[run_id]
        if self.restart_window is not None:
            self.restart_window.answered(run_id)
        return result

    async def _call(
        self, client: Client, generation: int, sent: ToolRequest, meta: types.RequestParamsMeta
    ) -> ToolResult:
        """One tools/call on `client`, with the answer to the question it asked before (if any); a question no one
        answers at once ends it as a result carrying the question (tools/elicitation.py)."""
        started = time.perf_counter()
        call, saved, on_elicit = sent.call, saved_answer(sent.run, sent.call.id), sent.run.on_elicit
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            tag = f"{sent.run.run_id}/{call.id}"
            tagged = cast(types.RequestParamsMeta, {**meta, CALL_TAG_META: tag})
            with self._questions.asking(tag, saved, on_elicit) as asking:
                answered = await self._send(client, generation, sent, tagged, started)
            if asking.wanted is not None:
                return paused(call.id, call.name, asking.wanted)
            if isinstance(answered, types.InputRequiredResult):  # not a handshake-era answer
                return failed(call.id, call.name, "tool_failed", texts.unanswerable(self.name, "out of its era"))
            return answered
        responses: types.InputResponses | None = None
        state: str | None = None
        if saved is not None and saved[0].era == "2026-07-28":
            responses, state = {saved[0].key: wire_answer(saved[1])}, saved[0].request_state
        for _ in range(MAX_ROUNDS):
            result = await self._send(client, generation, sent, meta, started, responses, state)
            if not isinstance(result, types.InputRequiredResult):
                return result
            wanted = wanted_of(result)
            if isinstance(wanted, str):
                return failed(call.id, call.name, "tool_failed", texts.unanswerable(self.name, wanted), since=started)
            if on_elicit is None:
                return paused(call.id, call.name, wanted)
            responses, state = {wanted.key: wire_answer(await on_elicit(wanted))}, result.request_state
        return failed(call.id, call.name, "tool_failed", texts.unanswerable(self.name, "it kept asking"), since=started)

    async def _send(
        self,
        client: Client,
        generation: int,
        sent: ToolRequest,
        meta: types.RequestParamsMeta,
        started: float,
        responses: types.InputResponses | None = None,
        state: str | None = None,
    ) -> ToolResult | types.InputRequiredResult:
        """One tools/call request; a dropped connection is ToolTransportError (and a restart)."""
        call, timeout_s, on_progress = sent.call, sent.timeout_s, sent.on_progress
        try:
            # The session's own request, not `Client.call_tool`: that one checks structuredContent itself and
            # raises, where the ToolBox's one check (output_check.py) makes a `bad_output` result the model reads.
            if call.name in self._legacy_task_tools and client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
                return await tasks.call_legacy(client.session, sent, dict(meta), started)
            if (task_id := tasks.saved_task(sent)) is not None:  # a crashed run's task: followed, never re-sent
                resumed = {"taskId": task_id, "status": "working"}
                answering = self._task_questions(sent, task_id)
                return await tasks.follow(
                    client.session, sent, resumed, started=started, resumed=True, on_input=answering
                )

            async def send(answers: types.InputResponses | None, state: str | None) -> dict[str, Any]:
                params = types.CallToolRequestParams(
                    name=call.name, arguments=call.arguments, input_responses=answers, request_state=state, _meta=meta
                )
                answer = await client.session.send_request(
                    types.CallToolRequest(params=params),
                    tasks.Raw,  # a result, an InputRequiredResult or a task handle (told apart here)
                    request_read_timeout_seconds=timeout_s,
                    progress_callback=on_progress,
                )
                return dict(answer.model_extra or {})

            async def next_round(answers: types.InputResponses | None, state: str | None) -> CallRound:
                return CALL_ROUND.validate_python(await send(answers, state))

            raw = await send(responses, state)
            if tasks.is_task(raw):
                if sent.run.note_task is not None:
                    await sent.run.note_task(call.id, raw["taskId"])
                answering = self._task_questions(sent, raw["taskId"])
                return await tasks.follow(client.session, sent, raw, started=started, on_input=answering)
            result = CALL_ROUND.validate_python(raw)
            if self.asks.takes(result):  # sampling and roots: answered at once, for this call's run
                result = await self.asks.answered(client.session, result, next_round, sent)
        except InputRequiredRoundsExceededError as exc:
            return failed(call.id, call.name, "tool_failed", errors.tool_failed(call.name, str(exc)), since=started)
        except MCPError as exc:
            if exc.error.code == types.REQUEST_TIMEOUT:
                return failed(call.id, call.name, "timeout", errors.timed_out(call.name, timeout_s), since=started)
            if _closed(exc):
                self._lost(generation)
                raise ToolTransportError(f"the tool server '{self.name}' closed the connection") from exc
            if _no_answer(exc):  # the connection stands (a proxy's 502/504): no restart, the outcome unknown
                raise ToolTransportError(f"the tool server '{self.name}' {texts.HTTP_ERROR_NO_RESULT}") from exc
            text = errors.tool_failed(call.name, exc.error.message)
            return failed(call.id, call.name, "tool_failed", text, since=started)
        except LOST as exc:
            self._lost(generation)
            raise ToolTransportError(f"the tool server '{self.name}' went away ({type(exc).__name__})") from exc
        if isinstance(result, types.InputRequiredResult):
            return result
        if not isinstance(result, types.CallToolResult):
            text = errors.tool_failed(call.name, f"it answered with a {type(result).__name__}, not a tool result")
            return failed(call.id, call.name, "tool_failed", text, since=started)
        return from_call_result(call.id, call.name, result, since=started)

    def _task_questions(self, sent: ToolRequest, task_id: str) -> TaskQuestions:
        """Who answers the questions of a task this call follows (tools/elicitation.py)."""
        return TaskQuestions(sent.run, sent.call.id, task_id, self.name, sent.run.on_elicit)

    # ---- prompts and resources: thin, typed, a server's refusal as one readable line ------------------------
    async def list_mcp_tools(self) -> list[types.Tool]:
        """Every tool as the server lists it (all pages), annotations and all: what `toolwire tools` shows."""
        return await self._all_pages("tools/list", Client.list_tools, lambda page: page.tools)

    async def list_prompts(self) -> list[types.Prompt]:
        """Every prompt the server lists (all pages); none when it offers no prompts."""
        return await self._all_pages("prompts/list", Client.list_prompts, lambda page: page.prompts)

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> types.GetPromptResult:
        return await self._ask("prompts/get", lambda c: c.get_prompt(name, arguments))

    async def list_resources(self) -> list[types.Resource]:
        """Every resource the server lists (all pages); none when it offers no resources."""
        return await self._all_pages("resources/list", Client.list_resources, lambda page: page.resources)

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        return await self._ask("resources/read", lambda c: c.read_resource(uri))

    async def _all_pages(
        self, method: str, list_page: Callable[..., Awaitable[Page]], items: Callable[[Page], list[Item]]
    ) -> list[Item]:
        """Every item of a paginated list request, page after page (none when the server does not implement it)."""
        found: list[Item] = []
        cursor: str | None = None
        while True:
            page = await self._listing(method, partial(list_page, cursor=cursor))
            found += items(page) if page else []
            cursor = page.next_cursor if page else None
            if not cursor:
                return found

    async def _listing(self, method: str, send: Callable[[Client], Awaitable[R]]) -> R | None:
        """A list request; None from a server that does not implement it (it has none of those)."""
        try:
            return await self._ask(method, send)
        except ServerRequestFailed as exc:
            if exc.code == types.METHOD_NOT_FOUND:
                return None
            raise

    async def _ask(self, method: str, send: Callable[[Client], Awaitable[R]]) -> R:
        """One request on the live session: an error answer raises ServerRequestFailed in the server's words, a
        dropped connection ToolTransportError (and reconnects, as a call does)."""
        client, generation = await self._connected()
        try:
            return await send(client)
        except MCPError as exc:
            if _closed(exc):
                self._lost(generation)
                raise ToolTransportError(f"the tool server '{self.name}' closed the connection") from exc
            text = texts.server_request_failed(self.name, method, exc.error.message)
            raise ServerRequestFailed(text, exc.error.code, exc.error.message) from exc
        except LOST as exc:
            self._lost(generation)
            raise ToolTransportError(f"the tool server '{self.name}' went away ({type(exc).__name__})") from exc


def _closed(exc: MCPError) -> bool:
    """The SDK's own "the connection closed": code -32000 is also the first of the range a server's own errors use
    (JSON-RPC), so a server's `-32000: backend unavailable` is its answer, not a lost connection."""
    return exc.error.code == types.CONNECTION_CLOSED and exc.error.message == "Connection closed" and not exc.error.data


def _no_answer(exc: MCPError) -> bool:
    """The SDK's stand-in for an HTTP error status that carried no JSON-RPC answer: a proxy that lost the replica
    mid-call (nginx's 502 when it died, 504 when it stalled past `proxy_read_timeout`), or a server that failed before
    it could answer. The call may have run: its outcome is unknown, never a tool's own failure (issue 38)."""
    error = exc.error
    return error.code == types.INTERNAL_ERROR and error.message == SDK_HTTP_ERROR and not error.data


def _announced_changes(client: Client) -> tuple[bool, bool]:
    """Whether a 2026-07-28 connection's server says its tool list, and its resource list, may change (the only way
    to hear it is to listen)."""
    if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False, False
    tools, resources = client.server_capabilities.tools, client.server_capabilities.resources
    return bool(tools and tools.list_changed), bool(resources and resources.list_changed)


def _tool_name(item: object) -> str:
    name = item.get("name") if isinstance(item, dict) else None
    return name if isinstance(name, str) else "?"


def _schema_problem(exc: pydantic.ValidationError) -> str:
    """The first field of a listed tool that breaks MCP's schema: `inputSchema has no "type"`."""
    error = exc.errors()[0]
    loc = [str(part) for part in error["loc"] if not isinstance(part, int)]
    loc = loc[1:] if loc[:1] == ["tools"] else loc
    if error["type"] == "missing" and loc:
        parent = ".".join(loc[:-1])
        return f'{parent} has no "{loc[-1]}"' if parent else f'no "{loc[-1]}"'
    return f"{'.'.join(loc) or 'the tool'}: {error['msg']}"


def _first(exc: BaseException, kind: type[E]) -> E | None:
    """The first `kind` in an exception, the groups it is in or the errors that caused it."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, kind):
            return current
        todo += list(getattr(current, "exceptions", ()))
        todo += [e for e in (current.__cause__, current.__context__) if e is not None]
    return None


def _jsonrpc_error_message(body: bytes) -> str | None:
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) else None


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
