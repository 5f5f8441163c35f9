"""The lean path for the commonest request on stdio: a 2026-07-28 (modern era) `tools/call` of a tool that needs no
session (it takes no ToolContext) is answered from the read loop itself: parsed once, run through the one tool-call
path (`execution.call_tool`), checked and shaped by the same per-version surface functions the SDK uses, and written
as one line. The SDK's dispatcher, runner, middleware chain and memory streams around it cost about four fifths of a
call (bench/server_bench.py). Anything else, and anything this path is not sure of, goes to the SDK untouched; its
answers are the SDK path's answers (tests/server/test_fast_path.py compares them)."""

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
import pydantic_core
from mcp_types import methods
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from opentelemetry import trace
from opentelemetry.propagate import extract
from opentelemetry.trace import SpanKind, StatusCode
from pydantic import ValidationError

from toolwire_server.access import Grant
from toolwire_server.execution import call_tool
from toolwire_server.limits import ServerLimits
from toolwire_server.registry import Registry
from toolwire_shared.tools import IDEMPOTENCY_KEY_META

log = logging.getLogger("toolwire.server")

CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"
_MARKERS = (b'"tools/call"', b'"notifications/cancelled"')
"""A line naming neither is not parsed here at all."""

_tracer = trace.get_tracer("toolwire.server")

WriteLine = Callable[[bytes], Awaitable[None]]


class FastCalls:
    """Takes the lines it can answer alone; `take` says whether it took one. In-flight calls run in `calls`."""

    def __init__(
        self,
        registry: Registry,
        grant: Grant,
        limits: ServerLimits,
        server_info: dict[str, Any],
        write_line: WriteLine,
    ):
        self.registry, self.grant, self.limits = registry, grant, limits
        self.server_info, self.write_line = server_info, write_line
        self._running: dict[str | int, anyio.CancelScope] = {}

    def take(self, line: bytes, calls: anyio.abc.TaskGroup) -> bool:
        if not any(marker in line for marker in _MARKERS):
            return False
        try:
            message = pydantic_core.from_json(line)
        except ValueError:
            return False  # the SDK path answers it -32700
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return False
        if message.get("method") == "notifications/cancelled":
            return self._cancel(message.get("params"))
        request_id = message.get("id")
        params = message.get("params")
        if not self._takes(request_id, params):
            return False
        assert isinstance(params, dict) and isinstance(request_id, str | int)
        scope = anyio.CancelScope()
        self._running[request_id] = scope
        calls.start_soon(self._answer, request_id, params, scope)
        return True

    def _takes(self, request_id: Any, params: Any) -> bool:
        """A modern-era tools/call whose envelope and params the SDK's own surface accepts, of a tool with no
        ToolContext (which would need the session: progress, logging, server-to-client requests)."""
        if not isinstance(request_id, str | int) or isinstance(request_id, bool) or request_id in self._running:
            return False
        if not isinstance(params, dict):
            return False
        meta = params.get("_meta")
        if not isinstance(meta, dict) or not isinstance(meta.get(CAPABILITIES_META), dict):
            return False
        version = meta.get(types.PROTOCOL_VERSION_META_KEY)
        if version not in MODERN_PROTOCOL_VERSIONS:
            return False
        name = params.get("name")
        if not isinstance(name, str):
            return False
        tool = self.registry.get(name)  # an unknown name gets call_tool's answer, as on the SDK path
        if tool is not None and "context" in tool.injected.values():
            return False
        try:
            methods.validate_client_request("tools/call", version, params)
        except (KeyError, ValueError, ValidationError):
            return False
        return True

    def _cancel(self, params: Any) -> bool:
        """A cancel of a call this path runs stops it (no answer is sent, as for the SDK's); others pass on."""
        request_id = params.get("requestId") if isinstance(params, dict) else None
        scope = self._running.get(request_id) if isinstance(request_id, str | int) else None
        if scope is None:
            return False
        scope.cancel()
        return True

    async def _answer(self, request_id: str | int, params: dict[str, Any], scope: anyio.CancelScope) -> None:
        meta: dict[str, Any] = params["_meta"]
        name: str = params["name"]
        try:
            with scope, _server_span(name, request_id, meta) as span:
                key = meta.get(IDEMPOTENCY_KEY_META)
                result = await call_tool(
                    self.registry,
                    self.grant,
                    name,
                    params.get("arguments"),
                    max_result_chars=self.limits.max_result_chars,
                    idempotency_key=key if isinstance(key, str) else None,
                )
                if result.is_error and span.is_recording():
                    span.set_attribute("error.type", "tool_error")
                    span.set_status(StatusCode.ERROR)
                line = self._response(request_id, meta[types.PROTOCOL_VERSION_META_KEY], result)
            if scope.cancelled_caught:
                log.info("call of %s cancelled (client cancelled)", name)
                return
            await self.write_line(line)
            log.debug("answered tools/call %s (id %r) on the fast path", name, request_id)
        except OSError as exc:  # the client went away: nobody is left to answer
            log.info("answer to %s not sent: %s", name, exc)
        finally:
            self._running.pop(request_id, None)

    def _response(self, request_id: str | int, version: str, result: types.CallToolResult) -> bytes:
        """The line the SDK would write: the result shaped by its per-version surface, `resultType` and the
        serverInfo stamp filled as the 2026-07-28 spec requires."""
        dumped = methods.serialize_server_result(
            "tools/call", version, result.model_dump(by_alias=True, mode="json", exclude_none=True)
        )
        dumped.setdefault("resultType", "complete")
        stamp = dumped.get("_meta")
        if stamp is None:
            dumped["_meta"] = {SERVER_INFO_META: self.server_info}
        elif isinstance(stamp, dict) and stamp.get(SERVER_INFO_META) is None:
            dumped["_meta"] = {**stamp, SERVER_INFO_META: self.server_info}
        return pydantic_core.to_json({"jsonrpc": "2.0", "id": request_id, "result": dumped}) + b"\n"


class _NoSpan:
    """What `_server_span` gives when no tracer provider is installed: nothing to record, nothing to pay for."""

    def __enter__(self) -> trace.Span:
        return trace.INVALID_SPAN

    def __exit__(self, *exc: object) -> None:
        return None


def _server_span(name: str, request_id: str | int, meta: dict[str, Any]) -> Any:
    """The server span the SDK's OpenTelemetry middleware makes for a tools/call, under the caller's span when
    `_meta` carries its trace context."""
    if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return _NoSpan()
    try:
        parent = extract(meta)
    except (ValueError, TypeError):
        parent = None
    if parent is not None and not trace.get_current_span(parent).get_span_context().is_valid:
        parent = None
    attributes = {
        "mcp.method.name": "tools/call",
        "mcp.protocol.version": meta.get(types.PROTOCOL_VERSION_META_KEY),
        "jsonrpc.request.id": str(request_id),
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
    }
    return _tracer.start_as_current_span(
        f"tools/call {name}",
        kind=SpanKind.SERVER,
        attributes=attributes,
        context=parent,
        record_exception=False,
        set_status_on_exception=False,
    )
