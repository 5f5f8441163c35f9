"""The MCP server: the low-level `mcp.server.Server` whose tool table is the registry, filtered per caller."""

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.models import InitializationOptions
from mcp.server.request_state import RequestStateBoundary
from mcp.shared.exceptions import MCPError

from toolwire_server import texts
from toolwire_server.auth.access import ALL_TOOLS, Grant
from toolwire_server.catalog import catalog_handlers
from toolwire_server.discovery import LISTING, Discovery
from toolwire_server.functions.elicit import InputNeeded, asker_of, state_security
from toolwire_server.isolation.watchdog import watch
from toolwire_server.limits import ServerLimits
from toolwire_server.surface.changes import Hub
from toolwire_server.tasks.engine import TaskEngine
from toolwire_server.tasks.protocol import add_handlers, as_task, task_call
from toolwire_server.tasks.store import TaskStore, default_location
from toolwire_server.tools.pipeline import call
from toolwire_server.tools.registry import Registry
from toolwire_server.tools.request import CallRequest
from toolwire_shared.elicitation import CALL_TAG_META
from toolwire_shared.tools import IDEMPOTENCY_KEY_META

log = logging.getLogger("toolwire.server")

GRANT_SCOPE_KEY = "toolwire.grant"
"""Where the HTTP auth layer leaves the caller's Grant in the ASGI scope."""


def caller_grant(ctx: ServerRequestContext[Any, Any], default: Grant) -> Grant:
    """The caller's grant: from the authenticated HTTP request, else the server-wide one (stdio)."""
    scope = getattr(ctx.request, "scope", None)
    if isinstance(scope, dict):
        grant = scope.get(GRANT_SCOPE_KEY)
        if isinstance(grant, Grant):
            return grant
    return default


def build_server(registry: Registry, *, limits: ServerLimits | None = None, grant: Grant = ALL_TOOLS) -> Server[Any]:
    """An MCP server for `registry`. `grant` applies where no HTTP token names the caller (stdio, in-memory)."""
    limits = limits or ServerLimits()
    listings: dict[Grant, types.ListToolsResult] = {}
    listed = {"version": registry.version}
    hub = Hub()
    tasks = TaskEngine(TaskStore(default_location(registry.name)), registry, max_result_chars=limits.max_result_chars)
    discovery = Discovery(registry) if registry.discovery == "search" else None

    async def on_list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if discovery is not None:
            return LISTING
        if listed["version"] != registry.version:  # a tool registered at runtime: every listing is stale
            listings.clear()
            listed["version"] = registry.version
        who = caller_grant(ctx, grant)
        listing = listings.get(who)
        if listing is None:
            listing = types.ListToolsResult(tools=[t.mcp_tool() for t in registry if who.allows(t.name)])
            listings[who] = listing
        return listing

    async def on_call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        who, name, arguments = caller_grant(ctx, grant), params.name, params.arguments
        if discovery is not None:
            found = discovery.answer(who, name, arguments)
            if isinstance(found, types.CallToolResult):
                return found
            name, arguments = found
        tool = registry.get(name)
        if tool is not None and who.allows(tool.name) and name == params.name and as_task(tool, ctx):
            answer = await task_call(tasks, tool, who, ctx)
            # The SDK serialises a mapping (a CreateTaskResult) as it is; its handler type names only the core shapes.
            return answer if not isinstance(answer, dict) else cast(types.CallToolResult, answer)
        key, tag = (params.meta or {}).get(IDEMPOTENCY_KEY_META), (params.meta or {}).get(CALL_TAG_META)
        session = ctx.session

        async def send_log(level: str, data: Any) -> None:
            logger = name
            await session.send_log_message(level, data, logger=logger, related_request_id=ctx.request_id)  # type: ignore[arg-type]

        try:
            request = CallRequest(
                registry,
                who,
                name,
                arguments,
                max_result_chars=limits.max_result_chars,
                idempotency_key=key if isinstance(key, str) else None,
                session=session,
                request_id=ctx.request_id,
                progress=session.report_progress,
                send_log=send_log,
                asker=asker_of(ctx, tag if isinstance(tag, str) else None),
            )
            return await call(request)
        except InputNeeded as asked:  # 2026-07-28: the tool asked a question; the client calls again with the answer
            return asked.result
        except anyio.get_cancelled_exc_class():
            log.info("call of %s cancelled (client cancelled or went away)", name)
            raise

    async def on_set_level(
        ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        return types.EmptyResult()

    def input_schema(name: str) -> dict[str, Any] | None:
        tool = registry.get(name)
        return tool.schema if tool else None

    @asynccontextmanager
    async def lifespan(_: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        """Once per server (stdio connection, or HTTP session manager): the stall watchdog, the worker pool, the
        hub that tells this server's clients what changed in the registry, and its mounts (upstream servers)."""
        async with (
            anyio.create_task_group() as tg,
            registry.workers.serving(warm=registry.isolated()),
            registry.changes.serving(hub),
            tasks.serving(),
            registry.mounted(),
        ):
            tg.start_soon(watch)
            yield {}
            tg.cancel_scope.cancel()

    async def note_connection(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        hub.seen(ctx.session, caller_grant(ctx, grant))
        return await call_next(ctx)

    server: Server[Any] = _Server(
        registry.name,
        version=_version(),
        lifespan=lifespan,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        get_tool_input_schema=input_schema,
        **catalog_handlers(
            registry,
            lambda ctx: caller_grant(ctx, grant),
            hub,
            max_listens_per_agent=limits.max_listen_streams_per_agent,
        ),
    )
    # Legacy clients (and the conformance suite) call logging/setLevel before tools that log.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, on_set_level)
    add_handlers(server, tasks, lambda ctx: caller_grant(ctx, grant).agent or "")
    # The client echoes a 2026-07-28 elicitation's `requestState`: sealed here, so it cannot be forged or altered
    # (a shared key across replicas and restarts: TOOLWIRE_STATE_KEY, functions/elicit.py).
    sealed = RequestStateBoundary(state_security(), default_audience=registry.name)
    server.middleware += [explain_uninitialized, note_connection, sealed]
    return server


class _Server(Server[Any]):
    """The SDK's server, advertising list-changed notifications to handshake-era clients too (the SDK's default
    says none): the registry tells its running servers about every registration (changes.py)."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        every = notification_options or NotificationOptions(
            prompts_changed=True, resources_changed=True, tools_changed=True
        )
        return super().create_initialization_options(every, experimental_capabilities, extensions)


_SDK_PRE_INIT = "Invalid request parameters"
"""What the SDK's gate answers (code -32602, pinned for compatibility) to a request before `initialize`."""


async def explain_uninitialized(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Say why a request before the handshake is refused: same code as the SDK's gate, a message that says so."""
    try:
        return await call_next(ctx)
    except MCPError as exc:
        pre_init = exc.error.code == types.INVALID_PARAMS and exc.error.message == _SDK_PRE_INIT
        if pre_init and ctx.method != "initialize" and ctx.session.client_params is None:
            raise MCPError(code=types.INVALID_PARAMS, message=texts.not_initialized(ctx.method)) from None
        raise


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("toolwire")
    except PackageNotFoundError:
        return "0"
