"""The lean path for the commonest request on stdio: a 2026-07-28 (modern era) `tools/call` of a tool that needs no
session (it takes no ToolContext) is answered from the read loop itself: parsed once, run through the one tool-call
path (tools/pipeline.py), checked and shaped by the same per-version surface functions the SDK uses, and written
as one line. The SDK's dispatcher, runner, middleware chain and memory streams around it cost about four fifths of a
call (bench/server_bench.py). Anything else, and anything this path is not sure of, goes to the SDK untouched; its
answers are the SDK path's answers (tests/server/test_fast_path.py compares them)."""

import logging
import os
from collections.abc import Awaitable, Callable
from contextlib import nullcontext
from dataclasses import dataclass
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

from toolwire_server.auth.access import Grant
from toolwire_server.limits import ServerLimits
from toolwire_server.tools.pipeline import result_of, run
from toolwire_server.tools.registry import Registry
from toolwire_server.tools.request import CallRequest
from toolwire_shared.tools import IDEMPOTENCY_KEY_META

log = logging.getLogger("toolwire.server")

FAST_PATH_OFF_ENV = "TOOLWIRE_NO_FAST_PATH"
"""Set to 1 to send every request through the SDK (on stdio and HTTP alike)."""


def enabled() -> bool:
    return os.environ.get(FAST_PATH_OFF_ENV, "").strip() in ("", "0")


CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"
_MARKERS = (b'"tools/call"', b'"notifications/cancelled"')
"""A line naming neither is not parsed here at all."""

_tracer = trace.get_tracer("toolwire.server")

WriteLine = Callable[[bytes], Awaitable[None]]


@dataclass(frozen=True)
class FastCall:
    """A request this path answers: a modern-era tools/call the SDK's own surface accepts."""

    request_id: str | int
    name: str
    arguments: dict[str, Any] | None
    meta: dict[str, Any]

    @property
    def version(self) -> str:
        return str(self.meta[types.PROTOCOL_VERSION_META_KEY])


def fast_call(message: Any, registry: Registry) -> FastCall | None:
    """The call, when `message` is a modern-era tools/call whose envelope and params the SDK's surface accepts, of
        a tool with no ToolContext (which would need the session: progress, logging, server-to-client requests) that
    never runs as a task."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("method") != "tools/call":
        return None
    if registry.discovery != "list":  # search_tools and call_tool are the SDK path's (discovery.py)
        return None
    request_id, params = message.get("id"), message.get("params")
    if not isinstance(request_id, str | int) or isinstance(request_id, bool) or not isinstance(params, dict):
        return None
    meta, name, arguments = params.get("_meta"), params.get("name"), params.get("arguments")
    if not isinstance(meta, dict) or not isinstance(meta.get(CAPABILITIES_META), dict) or not isinstance(name, str):
        return None
    version = meta.get(types.PROTOCOL_VERSION_META_KEY)
    if version not in MODERN_PROTOCOL_VERSIONS:
        return None
    tool = registry.get(name)  # an unknown name gets the pipeline's answer, as on the SDK path
    if tool is not None and ("context" in tool.injected.values() or tool.task is not None):
        return None  # a task-supporting tool goes to the SDK path too: it may become a task (tasks/protocol.py)
    try:
        methods.validate_client_request("tools/call", version, params)
    except (KeyError, ValueError, ValidationError):
        return None
    return FastCall(request_id, name, arguments if isinstance(arguments, dict) else None, meta)


@dataclass(frozen=True)
class Answerer:
    """Runs a FastCall through the call pipeline and writes the JSON-RPC response the SDK would write."""

    registry: Registry
    limits: ServerLimits
    server_info: dict[str, Any]

    async def answer(self, call: FastCall, grant: Grant) -> bytes:
        with _server_span(call.name, call.request_id, call.meta) as span:
            key = call.meta.get(IDEMPOTENCY_KEY_META)
            request = CallRequest(
                self.registry,
                grant,
                call.name,
                call.arguments,
                max_result_chars=self.limits.max_result_chars,
                idempotency_key=key if isinstance(key, str) else None,
            )
            result = result_of(await run(request))
            if result.is_error and span.is_recording():
                span.set_attribute("error.type", "tool_error")
                span.set_status(StatusCode.ERROR)
            return self._response(call, result)

    def _response(self, call: FastCall, result: types.CallToolResult) -> bytes:
        """The result shaped by the SDK's per-version surface, with `resultType` and the serverInfo stamp filled as
        the 2026-07-28 spec requires."""
        dumped = methods.serialize_server_result(
            "tools/call", call.version, result.model_dump(by_alias=True, mode="json", exclude_none=True)
        )
        dumped.setdefault("resultType", "complete")
        stamp = dumped.get("_meta")
        if stamp is None:
            dumped["_meta"] = {SERVER_INFO_META: self.server_info}
        elif isinstance(stamp, dict) and stamp.get(SERVER_INFO_META) is None:
            dumped["_meta"] = {**stamp, SERVER_INFO_META: self.server_info}
        return pydantic_core.to_json({"jsonrpc": "2.0", "id": call.request_id, "result": dumped})


class StdioFastCalls:
    """On stdio: takes the lines it can answer alone (`take` says whether it took one) and runs them in `calls`."""

    def __init__(self, answerer: Answerer, grant: Grant, write_line: WriteLine):
        self.answerer, self.grant, self.write_line = answerer, grant, write_line
        self._running: dict[str | int, anyio.CancelScope] = {}

    def take(self, line: bytes, calls: anyio.abc.TaskGroup) -> bool:
        if not any(marker in line for marker in _MARKERS):
            return False
        try:
            message = pydantic_core.from_json(line)
        except ValueError:
            return False  # the SDK path answers it -32700
        if isinstance(message, dict) and message.get("method") == "notifications/cancelled":
            return self._cancel(message.get("params"))
        call = fast_call(message, self.answerer.registry)
        if call is None or call.request_id in self._running:
            return False
        scope = self._running[call.request_id] = anyio.CancelScope()
        calls.start_soon(self._answer, call, scope)
        return True

    def _cancel(self, params: Any) -> bool:
        """A cancel of a call this path runs stops it (no answer is sent, as for the SDK's); others pass on."""
        request_id = params.get("requestId") if isinstance(params, dict) else None
        scope = self._running.get(request_id) if isinstance(request_id, str | int) else None
        if scope is None:
            return False
        scope.cancel()
        return True

    async def _answer(self, call: FastCall, scope: anyio.CancelScope) -> None:
        try:
            with scope:
                line = await self.answerer.answer(call, self.grant)
            if scope.cancelled_caught:
                log.info("call of %s cancelled (client cancelled)", call.name)
                return
            await self.write_line(line + b"\n")
            log.debug("answered tools/call %s (id %r) on the fast path", call.name, call.request_id)
        except OSError as exc:  # the client went away: nobody is left to answer
            log.info("answer to %s not sent: %s", call.name, exc)
        finally:
            self._running.pop(call.request_id, None)


def _server_span(name: str, request_id: str | int, meta: dict[str, Any]) -> Any:
    """The server span the SDK's OpenTelemetry middleware makes for a tools/call, under the caller's span when
    `_meta` carries its trace context."""
    if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return nullcontext(trace.INVALID_SPAN)  # no tracer provider installed: nothing to record or pay for
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
