"""In-process tools: plain Python functions behind the ToolSource seam, to measure the loop with no transport."""

import inspect
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import jsonschema

from toolwire_shared import errors
from toolwire_shared.results import ToolResult
from toolwire_shared.tools import ToolSpec


@dataclass(frozen=True)
class LocalTool:
    spec: ToolSpec
    fn: Callable[..., Any]


@dataclass
class InprocInfo:
    transport: str = "inproc"
    protocol_version: str | None = None
    session_id: str | None = None
    server_address: str | None = None
    server_port: int | None = None


class LocalSource:
    """Implements ToolSource over a dict of functions; sync functions run in a worker thread, like the server."""

    def __init__(self, tools: list[LocalTool], *, name: str = "local"):
        self.name = name
        self._tools = {tool.spec.name: tool for tool in tools}

    async def start(self) -> None:
        return None

    async def aclose(self) -> None:
        return None

    async def list_tools(self) -> list[ToolSpec]:
        return [tool.spec.model_copy(update={"source": self.name}) for tool in self._tools.values()]

    def transport_info(self) -> InprocInfo:
        return InprocInfo()

    async def call(
        self, name: str, arguments: dict[str, Any], *, call_id: str, timeout_s: float, idempotency_key: str | None
    ) -> ToolResult:
        started = time.perf_counter()
        tool = self._tools.get(name)
        if tool is None:
            return _error(call_id, name, errors.unknown_tool(name, self._tools), "unknown_tool", started)
        problems = [e.message for e in jsonschema.Draft202012Validator(tool.spec.input_schema).iter_errors(arguments)]
        if problems:
            return _error(
                call_id, name, errors.bad_arguments(name, problems, tool.spec.input_schema), "bad_arguments", started
            )
        try:
            with anyio.move_on_after(timeout_s) as scope:
                value = await _invoke(tool.fn, arguments)
            if scope.cancelled_caught:
                return _error(call_id, name, errors.timed_out(name, timeout_s), "timeout", started)
        except Exception as exc:  # a tool failure is a result the model reads, never a crash
            return _error(call_id, name, errors.tool_failed(name, str(exc)), "tool_failed", started)
        content = value if isinstance(value, str) else json.dumps(value)
        return ToolResult(call_id=call_id, name=name, content=content, duration_s=time.perf_counter() - started)


async def _invoke(fn: Callable[..., Any], arguments: dict[str, Any]) -> Any:
    if inspect.iscoroutinefunction(fn):
        return await fn(**arguments)
    return await anyio.to_thread.run_sync(lambda: fn(**arguments), abandon_on_cancel=True)


def _error(call_id: str, name: str, text: str, kind: Any, started: float) -> ToolResult:
    return ToolResult(
        call_id=call_id,
        name=name,
        content=text,
        is_error=True,
        error_kind=kind,
        duration_s=time.perf_counter() - started,
    )


def local_tool(
    fn: Callable[..., Any], schema: dict[str, Any], *, description: str | None = None, **policy: Any
) -> LocalTool:
    """A LocalTool from a function and its argument schema; policy keywords go to ToolPolicy."""
    from toolwire_shared.tools import ToolPolicy

    spec = ToolSpec(
        name=fn.__name__,
        description=description or (fn.__doc__ or fn.__name__).strip(),
        input_schema={"type": "object", **schema},
        policy=ToolPolicy(**policy),
    )
    return LocalTool(spec=spec, fn=fn)
