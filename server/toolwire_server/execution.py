"""Running one call: validate, gate on the tool's concurrency, run under its timeout, and turn every outcome into a
result the model can act on. Nothing here raises to the transport except cancellation."""

import logging
from functools import partial
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from pydantic import ValidationError

from toolwire_server.context import ToolContext
from toolwire_server.registry import RegisteredTool
from toolwire_server.results import error_result, to_result
from toolwire_server.schema import describe_problems
from toolwire_shared import errors

log = logging.getLogger("toolwire.server")


async def execute(
    tool: RegisteredTool, arguments: dict[str, Any] | None, context: ToolContext, *, max_result_chars: int
) -> types.CallToolResult:
    try:
        validated = tool.model.model_validate(arguments or {})
    except ValidationError as exc:
        return error_result(errors.bad_arguments(tool.name, describe_problems(exc), tool.schema))
    kwargs = dict(validated)
    for param, kind in tool.injected.items():
        kwargs[param] = context if kind == "context" else context.idempotency_key

    timeout = tool.policy.timeout_s
    try:
        with anyio.move_on_after(timeout) as scope:
            if tool.limiter is None:
                value = await _invoke(tool, kwargs)
            else:
                async with tool.limiter:
                    value = await _invoke(tool, kwargs)
    except Exception as exc:  # a tool failure is a result, never a crash; its message is never hidden
        log.warning("tool %s raised %s: %s", tool.name, type(exc).__name__, exc)
        return error_result(errors.tool_failed(tool.name, str(exc) or type(exc).__name__))
    if scope.cancelled_caught:
        log.warning("tool %s timed out after %gs and was cancelled", tool.name, timeout)
        return error_result(errors.timed_out(tool.name, timeout))
    try:
        return to_result(value, max_result_chars)
    except Exception as exc:
        return error_result(errors.tool_failed(tool.name, f"its result could not be serialised: {exc}"))


async def _invoke(tool: RegisteredTool, kwargs: dict[str, Any]) -> Any:
    if tool.is_async:
        return await tool.fn(**kwargs)
    # A sync function may block; a worker thread keeps the loop serving other calls. It cannot be interrupted,
    # so on timeout the result is dropped and the thread is abandoned.
    return await anyio.to_thread.run_sync(partial(tool.fn, **kwargs), abandon_on_cancel=True)
