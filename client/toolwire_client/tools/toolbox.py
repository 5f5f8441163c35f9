"""All tool sources of one run behind one `call` that never raises: what the model is offered of their tools (the
layers of tools/tool_layers.py: allow-list, wire names mapped back to each source's own, approval marks), timeouts,
idempotent retries, the client's result cap, and spans."""

import hashlib
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime

import anyio

from toolwire_client import texts
from toolwire_client.tools.output_check import checked
from toolwire_client.tools.source import (
    ProgressFn,
    RunContext,
    ToolRequest,
    ToolSource,
    ToolTransportError,
)
from toolwire_client.tools.tool_layers import (
    AllowFilter,
    ApprovalMarks,
    LoadingLayer,
    NoSuchTool,
    Route,
    ToolLayer,
    WireNames,
    named,
)
from toolwire_otel.content import record_tool_content
from toolwire_otel.spans import record_mcp, record_tool_result, telemetry_off, tool_span
from toolwire_shared import errors
from toolwire_shared.messages import ToolCall
from toolwire_shared.results import ToolResult, failed
from toolwire_shared.tools import ToolSpec

TIMEOUT_GRACE_S = 0.5
"""How long past a tool's timeout the client waits for the source's own timeout answer before cutting it."""

OnProgress = Callable[[ToolCall, float, float | None, str | None], None]
"""A running call's progress report (progress, total or None, message or None), as it arrives: what `toolwire run`
shows live."""


def idempotency_key(run_id: str, call_id: str) -> str:
    """The same for every send of one call of one run, so a retried write is answered once."""
    return hashlib.sha256(f"{run_id}/{call_id}".encode()).hexdigest()[:32]


CHOICE_WORDS = ("auto", "required", "none")
"""The tool choices that name no tool."""


def _one_source_a_name(sources: list[ToolSource]) -> None:
    """Tools are told apart by their server's name: two servers named alike would make one's tools the other's."""
    names = [source.name for source in sources]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"two tool servers of this run are named {twice[0]!r}: give each server its own name")


class ToolBox:
    def __init__(
        self,
        sources: list[ToolSource],
        allow: list[str] | None = None,
        timeouts: dict[str, float] | None = None,
        transport_retries: int = 1,
        on_progress: OnProgress | None = None,
        max_result_chars: int | None = None,
        choice: str | None = None,
        risky: list[str] | None = None,
        marked: dict[str, frozenset[str]] | None = None,
        layers: Sequence[ToolLayer] = (),
    ):
        """`layers` go between the `--allow` filter and the wire names (tools/tool_layers.py): they see the tools
        allowed, by the names users know them by, and may hide, change or add tools before they are named."""
        self.sources = sources
        self.choice = choice
        """The tool the model is made to call (`tool_choice` naming a tool), checked against the tools listed."""
        self.layers: list[ToolLayer] = [AllowFilter(allow), *layers, WireNames(), ApprovalMarks(marked, risky)]
        """What the model is offered of the tools listed, bottom first: the `--allow` filter, the given layers, the
        wire names, then the approval marks (a servers file's `risky`; the run's `--risky` names checked)."""
        self._loading = [layer for layer in layers if isinstance(layer, LoadingLayer)]
        """The layers whose offer changes as the run goes (tool search)."""
        self.timeouts = timeouts or {}
        self.transport_retries = transport_retries
        self.on_progress = on_progress
        self.max_result_chars = max_result_chars
        self.limit_wait_s = LIMIT_WAIT_S
        self._routes: dict[str, Route] = {}
        self._named: list[Route] | None = None
        """Every tool listed, named (the bottom of the stack), as last listed."""
        self._listed: dict[int, list[ToolSpec]] = {}
        """Source (by id) -> the tools it listed last."""
        self.started = False

    def add_layer(self, layer: ToolLayer) -> bool:
        """One more layer over the given ones, under the wire names (a run's own, added by the Agent); False for a
        narrowed view, whose routes are its parent's."""
        if self.started and not self._listed:
            return False
        self.layers.insert(len(self.layers) - 2, layer)
        if self.started:
            self._route()
        return True

    async def start(self) -> None:
        """Start every source in turn; if one fails, the ones already started are closed before the error goes on."""
        self.started = True
        try:
            for source in self.sources:
                await source.start()
                self._listed[id(source)] = await source.list_tools()
        except BaseException:
            await self.aclose()  # not shielded: each McpSource's task group must be the innermost scope it exits
            raise
        try:
            _one_source_a_name(self.sources)
            self._check_names(self._route())
        except BaseException:
            await self.aclose()
            raise

    async def refresh(self) -> bool:
        """List again every source whose server said its tool list changed (MCP `list_changed`): the next model call
        is offered its new tools. True when what the model is offered changed."""
        changed = [source for source in self.sources if source.tools_changed]
        relayered = False
        for layer in self.layers:
            if layer.changed():  # a tool search loaded a tool, ...
                relayered = True
                break
        if not (changed or relayered) or not any(id(source) in self._listed for source in self.sources):
            return False  # nothing changed (every step but a few), or a view (narrowed): its routes are its parent's
        before = self.specs
        for source in changed:
            source.tools_changed = False
            self._listed[id(source)] = await source.list_tools()
        self._route(relisted=bool(changed))
        return self.specs != before

    def _route(self, relisted: bool = True) -> list[Route]:
        """The routes of the tools listed, each layer applied over the one below; at the start, after every
        list_changed, and after a layer's change (a tool search's load: the tools are named as they were). Every
        tool listed returned, named, before any layer."""
        if relisted or self._named is None:
            self._named = named(
                [(source, spec) for source in self.sources for spec in self._listed.get(id(source), [])]
            )
        listed = routes = self._named
        for layer in self.layers:
            routes = layer.offer(routes)
        self._routes = {route.spec.name: route for route in routes}
        return listed

    @property
    def instructions(self) -> list[tuple[str, str]]:
        """(server name, its `instructions`) of every source that sent some (McpSource), in the servers' order."""
        return [(source.name, source.instructions) for source in self.sources if source.instructions]

    def _check_names(self, listed: list[Route]) -> None:
        """A setting that names no tool of any source (an --allow pattern, a --risky name, a tool choice) is a
        mistake of the run's configuration: each layer says so of its own once every source has listed its tools (a
        pattern may match nothing on one server and something on another)."""
        for layer in self.layers:
            layer.check(listed, self.sources)
        if self.choice is not None and self.choice not in CHOICE_WORDS:
            offered = {route.known for route in self._routes.values()} | set(self._routes)
            if self.choice not in offered:
                raise NoSuchTool("--tool-choice", self.choice, sorted({r.known for r in self._routes.values()}))

    async def aclose(self) -> None:
        self.started = False
        for source in reversed(self.sources):
            await source.aclose()

    @asynccontextmanager
    async def opened(self) -> AsyncIterator["ToolBox"]:
        """Started for the caller unless it already is, and closed only if started here."""
        if self.started:
            yield self
            return
        async with self:
            yield self

    async def __aenter__(self) -> "ToolBox":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    @property
    def specs(self) -> list[ToolSpec]:
        """The tool definitions the model sees (a route a layer keeps from it is still called by name: a tool search's
        not loaded yet, a tool code mode leaves to scripts)."""
        return [route.spec for route in self._routes.values() if route.offered]

    @property
    def loaded(self) -> list[str] | None:
        """The tools a tool search has loaded so far (saved with each step); None when no tool search is on."""
        for layer in self._loading:
            names = layer.loading
            if names is not None:
                return names
        return None

    def load(self, names: list[str]) -> None:
        """Load these tools too (what a provider's own search found): offered from the next request on, once
        `refresh` routes again."""
        for layer in self._loading:
            layer.load(names)

    def restore(self, names: list[str]) -> None:
        """Loaded exactly these as a run starts (a resumed run's, as its last step recorded them; a new run's: none,
        whatever the run before it on this ToolBox loaded)."""
        for layer in self._loading:
            layer.restore(names)

    def narrowed(self, names: Iterable[str]) -> "ToolBox":
        """A started view offering only `names` (a sub-agent's tools): the same sources, routes, timeouts, retries
        and cap; closing it closes nothing, the sources stay this ToolBox's."""
        view = ToolBox(
            [],
            timeouts=self.timeouts,
            transport_retries=self.transport_retries,
            on_progress=self.on_progress,
            max_result_chars=self.max_result_chars,
        )
        wanted = set(names)
        view._routes = {name: route for name, route in self._routes.items() if name in wanted}
        view.started = True
        return view

    def route(self, name: str) -> Route | None:
        """Where a call of `name` goes (its source, its spec, the names it is known by); None for a tool not offered."""
        return self._routes.get(name)

    def spec(self, name: str) -> ToolSpec | None:
        route = self._routes.get(name)
        return route.spec if route else None

    def aliases(self, name: str) -> frozenset[str]:
        """Every name `--risky` may name the tool the model calls `name` by (only `name` for a tool not offered)."""
        route = self._routes.get(name)
        return route.aliases if route else frozenset({name})

    async def call(self, call: ToolCall, run: RunContext, timeout_s: float | None = None) -> ToolResult:
        """Run one call of the run `run`; every failure comes back as an error result."""
        route = self._routes.get(call.name)
        if telemetry_off():  # no span or metric would keep anything: none is made
            return await self._sent(call, route, run, timeout_s)
        with tool_span(route.known if route else call.name, call.id, run.run_id) as span:
            if route is not None and span.is_recording():  # attributes only for a span that keeps them
                info = route.source.transport_info()
                record_mcp(
                    span,
                    transport=info.transport,
                    protocol_version=info.protocol_version,
                    session_id=info.session_id,
                    server_address=info.server_address,
                    server_port=info.server_port,
                )
            result = await self._sent(call, route, run, timeout_s)
            record_tool_result(span, result)
            record_tool_content(span, call, result)
            return result

    def _linked(self, source: ToolSource, uris: list[str]) -> None:
        for watcher in self.sources:
            if watcher.watches_links:
                watcher.linked(source, uris)

    async def recall_links(self, results: Iterable[ToolResult]) -> None:
        """A resumed run's earlier results' resource links, told again (this process has heard none of them), before
        anything is sent: an approved read_resource call is routed, and reads from the server that sent the link."""
        for result in results:
            route = self._routes.get(result.name)
            if result.links and route is not None:
                self._linked(route.source, result.links)
        await self.refresh()

    async def _sent(self, call: ToolCall, route: Route | None, run: RunContext, timeout_s: float | None) -> ToolResult:
        """The call sent, and sent again as its policy allows, as the run keeps its result (`_stamped`)."""
        started, sent_at = time.perf_counter(), datetime.now(UTC)
        if route is None:
            text = errors.unknown_tool(call.name, self._routes)
            return _stamped(failed(call.id, call.name, "unknown_tool", text, since=started), call, sent_at, 1)
        if call.parse_error is not None:
            text = texts.unparseable_arguments(call.name, call.raw_arguments or "", call.parse_error)
            return _stamped(failed(call.id, call.name, "bad_arguments", text, since=started), call, sent_at, 1)
        policy = route.spec.policy
        timeout = timeout_s or self.timeouts.get(route.known) or policy.timeout_s
        key = idempotency_key(run.run_id, call.id) if policy.idempotent else None
        tries = 1 + (self.transport_retries if policy.idempotent else 0)
        # the call as its source gets it: its name there, its own copy of the arguments (unless it only reads them)
        source = route.source
        if source.keeps_arguments and route.remote_name == call.name:
            sent = call
        else:
            sent = ToolCall(id=call.id, name=route.remote_name, arguments=dict(call.arguments))
        progress = None if self.on_progress is None else self._progress_of(call)
        request = ToolRequest(sent, run, timeout, key, progress, sent_at)
        for attempt in range(1, tries + 1):
            try:  # a source that times out itself is awaited as it is: no cancel scope, no frame of our own
                result = await (
                    source.call(request) if source.times_out_itself else self._send(request, route, started)
                )
                if result.error_kind == "limited" and result.retry_after_s is not None:
                    result = await self._after_limit(result, request, route, started)
                result = result if source.checks_output else checked(result, route.spec)
                result = result if self.max_result_chars is None else capped(result, self.max_result_chars)
                if result.links:  # read_resource reads a link from the server that sent it
                    self._linked(source, result.links)
                return _stamped(result, call, sent_at, attempt)
            except ToolTransportError as exc:
                if attempt == tries:
                    text = texts.transport_failed(call.name, str(exc), retried=attempt > 1)
                    return _stamped(
                        failed(call.id, call.name, "transport", text, since=started), call, sent_at, attempt
                    )
        raise AssertionError("unreachable")

    async def _after_limit(self, result: ToolResult, request: ToolRequest, route: Route, started: float) -> ToolResult:
        """A server's limit refused the call (it did not run, so sending it again is safe): wait exactly the time it
        named and send it again, as long as the waits add up to no more than `limit_wait_s` (a refusal after the
        wait names what is left: a clock of the server's that runs behind ours); else the model reads the refusal."""
        waited = 0.0
        for _ in range(LIMIT_RETRIES):
            wait = max(result.retry_after_s or 0.0, MIN_LIMIT_WAIT_S)
            if waited + wait > self.limit_wait_s:
                return result
            await anyio.sleep(wait)
            waited += wait
            result = await self._send(request, route, started)
            if result.error_kind != "limited" or result.retry_after_s is None:
                return result
        return result

    async def _send(self, request: ToolRequest, route: Route, started: float) -> ToolResult:
        if route.source.times_out_itself:
            return await route.source.call(request)
        with anyio.move_on_after(request.timeout_s + TIMEOUT_GRACE_S):
            return await route.source.call(request)
        name = route.spec.name  # the name the model called it by
        return failed(request.call.id, name, "timeout", errors.timed_out(name, request.timeout_s), since=started)

    def _progress_of(self, call: ToolCall) -> ProgressFn | None:
        """The source's progress callback for one call: reports reach `on_progress` with the call they are of. None
        when nobody listens, so the server is not asked for progress at all."""
        listener = self.on_progress
        if listener is None:
            return None

        async def report(progress: float, total: float | None, message: str | None) -> None:
            listener(call, progress, total, message)

        return report


LIMIT_WAIT_S = 30.0
"""`limited` results naming waits up to this long in all are waited out, the call sent again after each."""
LIMIT_RETRIES = 10
"""The most times one call is sent again after its waits."""
MIN_LIMIT_WAIT_S = 0.001
"""The least a wait is (a server that names none is not asked again at once)."""

NOTE_ROOM = 300
"""A result its server already cut (and noted) is cut again only when longer than the cap and this much more."""


def _stamped(result: ToolResult, call: ToolCall, sent_at: datetime, attempts: int) -> ToolResult:
    """The result as the run keeps it: the model's id and name for the call, when it was sent and how many times (a
    copy only where the source's result differs: the source's result is never changed)."""
    if result.started_at is sent_at and result.name == call.name and result.call_id == call.id and attempts == 1:
        return result
    return replace(result, started_at=sent_at, name=call.name, call_id=call.id, attempts=attempts)


def capped(result: ToolResult, max_chars: int | None) -> ToolResult:
    """`result` with its text cut to `max_chars` and a note the model can act on, marked truncated (as a toolwire
    server marks what it cuts); any server's result, ours or another's. The structured value stays whole."""
    total = len(result.content)
    if max_chars is None or total <= max_chars or (result.truncated and total <= max_chars + NOTE_ROOM):
        return result
    text = result.content[:max_chars] + texts.result_cut(max_chars, total)
    return replace(result, content=text, truncated=True)
