"""The pipeline's last step (tools/pipeline.py): run the tool (on the loop, in a thread, or in a worker process)
with the arguments the argument stage validated, and turn every outcome into a result the model can act on, shaped
and cut to `max_result_chars`. Nothing here raises to the caller except cancellation (and, for a task, an
`MCPError` the tool raised on purpose: a protocol error, the task's `failed` status; and InputNeeded, whose
InputRequiredResult is the call's answer in the 2026-07-28 era)."""

import dataclasses
import logging
from collections.abc import Awaitable
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from toolwire_server.functions.context import ToolContext
from toolwire_server.functions.elicit import ElicitationUnavailable, InputNeeded
from toolwire_server.functions.needs import ClientLacks
from toolwire_server.functions.results import answer_of, cut
from toolwire_server.isolation.watchdog import on_loop
from toolwire_server.isolation.workers import WorkerRaised
from toolwire_server.tools.registry import RegisteredTool
from toolwire_server.tools.request import Answer, CallRequest
from toolwire_shared import errors
from toolwire_shared.results import ErrorKind, failed_call

log = logging.getLogger("toolwire.server")


async def invoke(request: CallRequest) -> Answer:
    """The tool's answer to the validated call: a one-text-block answer within the cap as a TextAnswer."""
    tool, limit = request.tool, request.max_result_chars
    assert tool is not None and request.validated is not None  # the grant and argument stages ran
    try:
        value = await _started(tool, request.arguments or {}, request.validated, _context(request, tool), limit)
    except InputNeeded:  # the call ends here with the question; the client calls again with the answer
        raise
    except ClientLacks as exc:  # a protocol refusal (-32021): nothing ran that relied on what the client lacks
        raise exc.error() from None
    except ElicitationUnavailable as exc:
        return failed("tool_failed", errors.tool_failed(tool.name, str(exc)), limit)
    except Exception as exc:  # a tool failure is a result, never a crash; its message is cut, never hidden
        if request.raise_protocol_errors and isinstance(exc, MCPError):
            raise
        raised = exc.type_name if isinstance(exc, WorkerRaised) else type(exc).__name__
        message = errors.clip(str(exc) or raised, limit)
        log.warning("tool %s raised %s: %s", tool.name, raised, message)
        return failed("tool_failed", errors.tool_failed(tool.name, message), limit)
    if isinstance(value, _Finished):
        return value.result
    try:
        return answer_of(value, limit, tool=tool.name, output=tool.output)
    except Exception as exc:
        problem = errors.clip(f"its result could not be serialised: {exc}", limit)
        return failed("tool_failed", errors.tool_failed(tool.name, problem), limit)


def _context(request: CallRequest, tool: RegisteredTool) -> ToolContext | None:
    """The context the tool runs with: the way in's own (a task's), else one made from the request for a tool that
    reads one; None for a tool that reads none (a frozen dataclass of nine fields costs µs a call)."""
    if request.context is not None or (not tool.injected and tool.isolation != "process"):
        return request.context
    context = ToolContext(
        tool=tool.name,
        agent=request.grant.agent,
        idempotency_key=request.idempotency_key,
        session=request.session,
        request_id=request.request_id,
        progress_fn=request.progress,
        log_fn=request.send_log,
    )
    return context if request.asker is None else dataclasses.replace(context, asker=request.asker)


def failed(kind: ErrorKind, text: str, max_result_chars: int) -> types.CallToolResult:
    """An error result, cut like any result: an error never carries more text than a result may."""
    return cut(failed_call(kind, text), max_result_chars)


@dataclass(frozen=True)
class _Finished:
    """A result a worker process already made (and cut)."""

    result: types.CallToolResult


STOPPED = {
    "process": "stopped (its worker process was killed)",
    "loop": "cancelled",
    "thread": "abandoned: its thread runs on until the function returns (isolation='process' would stop it)",
}


def where(tool: RegisteredTool) -> str:
    return "process" if tool.isolation == "process" else "loop" if tool.is_async else "thread"


def _started(
    tool: RegisteredTool,
    arguments: dict[str, Any],
    validated: BaseModel,
    context: ToolContext | None,
    max_result_chars: int,
) -> Awaitable[Any]:
    """The tool's run, to await (no coroutine of its own: one frame less a call). `context`: None when the tool
    reads none (no injected parameter, runs here); a bare one is made if it does."""
    if tool.isolation == "process" and tool.workers is not None:
        return _in_worker(tool, arguments, context or ToolContext(tool=tool.name), max_result_chars)
    # its fields and extras (a mounted upstream tool's model allows any) read as they are: dict(validated) would
    # first look for a `keys` attribute through pydantic's __getattr__ (~6 µs a call, against ~0.3)
    kwargs = {**vars(validated), **(validated.__pydantic_extra__ or {})}
    for param, kind in tool.injected.items():
        context = context or ToolContext(tool=tool.name)
        kwargs[param] = context if kind == "context" else context.idempotency_key
    if tool.is_async:
        return on_loop(tool.name, tool.fn(**kwargs))  # its steps timed: the watchdog names a tool that stalls
    # A sync function may block; a worker thread keeps the loop serving other calls. It cannot be interrupted,
    # so on timeout the result is dropped and the thread is abandoned.
    return anyio.to_thread.run_sync(partial(tool.fn, **kwargs), abandon_on_cancel=True)


async def _in_worker(
    tool: RegisteredTool, arguments: dict[str, Any], context: ToolContext, max_result_chars: int
) -> "_Finished":
    assert tool.workers is not None
    return _Finished(await tool.workers.run(tool, arguments, context, max_result_chars=max_result_chars))
