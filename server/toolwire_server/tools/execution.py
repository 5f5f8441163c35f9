"""Running one call, the one path every tool call takes (stdio, HTTP and in-process alike): look the name up in
the registry, check the caller's grant, validate, gate on the tool's concurrency, run under its timeout (on the loop,
in a thread, or in a worker process that the timeout kills), and turn every outcome into a result the model can
act on, cut to `max_result_chars`. Nothing here raises to the caller except cancellation (and, for a task, an
`MCPError` the tool raised on purpose: a protocol error, the task's `failed` status)."""

import dataclasses
import logging
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

from toolwire_server.auth.access import Grant
from toolwire_server.functions.context import LogFn, ProgressFn, ToolContext
from toolwire_server.functions.elicit import Asker, ElicitationUnavailable, InputNeeded
from toolwire_server.functions.needs import ClientLacks
from toolwire_server.functions.results import TextAnswer, answer_of, cut
from toolwire_server.functions.schema import describe_problems
from toolwire_server.isolation.watchdog import on_loop
from toolwire_server.isolation.workers import WorkerRaised
from toolwire_server.tools.registry import RegisteredTool, Registry
from toolwire_shared import errors
from toolwire_shared.results import ErrorKind, failed_call

log = logging.getLogger("toolwire.server")


async def call_tool(
    registry: Registry,
    grant: Grant,
    name: str,
    arguments: dict[str, Any] | None,
    *,
    max_result_chars: int,
    idempotency_key: str | None = None,
    timeout_s: float | None = None,
    session: Any = None,
    request_id: Any = None,
    progress: ProgressFn | None = None,
    send_log: LogFn | None = None,
    asker: Asker | None = None,
) -> types.CallToolResult:
    """One tools/call from whoever holds `grant`; `timeout_s` narrows the tool's own timeout. Raises InputNeeded
    (its InputRequiredResult is the answer) only where `asker` asks in rounds (2026-07-28, functions/elicit.py). The
    registry's policy, if it has one, wraps the dispatch: limits first, an audit record after (policy/guard.py)."""
    dispatch = partial(
        _dispatch,
        registry,
        grant,
        name,
        arguments,
        max_result_chars=max_result_chars,
        idempotency_key=idempotency_key,
        timeout_s=timeout_s,
        session=session,
        request_id=request_id,
        progress=progress,
        send_log=send_log,
        asker=asker,
    )
    if registry.policy is None:
        return await dispatch()
    countable = name in registry and grant.allows(name)
    return await registry.policy.guard(grant.agent, name, arguments, dispatch, countable=countable)


async def call_in_process(
    registry: Registry,
    grant: Grant,
    name: str,
    arguments: dict[str, Any] | None,
    *,
    max_result_chars: int,
    idempotency_key: str | None = None,
    timeout_s: float | None = None,
    progress: ProgressFn | None = None,
) -> types.CallToolResult | TextAnswer:
    """`call_tool` for a caller in this process (the client's RegistrySource): the same path, but a one-text-block
    answer comes back as a TextAnswer (see `answer`), so no MCP result is built only to be read back. Under a
    policy, `call_tool`'s result: its audit record reads it."""
    if registry.policy is not None:
        return await call_tool(
            registry,
            grant,
            name,
            arguments,
            max_result_chars=max_result_chars,
            idempotency_key=idempotency_key,
            timeout_s=timeout_s,
            progress=progress,
        )
    found = _prepared(registry, grant, name, max_result_chars, idempotency_key, None, None, progress, None, None)
    if isinstance(found, types.CallToolResult):
        return found
    tool, context = found
    return await answer(tool, arguments, context, max_result_chars=max_result_chars, timeout_s=timeout_s)


async def _dispatch(
    registry: Registry,
    grant: Grant,
    name: str,
    arguments: dict[str, Any] | None,
    *,
    max_result_chars: int,
    idempotency_key: str | None,
    timeout_s: float | None,
    session: Any,
    request_id: Any,
    progress: ProgressFn | None,
    send_log: LogFn | None,
    asker: Asker | None,
) -> types.CallToolResult:
    found = _prepared(
        registry, grant, name, max_result_chars, idempotency_key, session, request_id, progress, send_log, asker
    )
    if isinstance(found, types.CallToolResult):
        return found
    tool, context = found
    return await execute(tool, arguments, context, max_result_chars=max_result_chars, timeout_s=timeout_s)


def _prepared(
    registry: Registry,
    grant: Grant,
    name: str,
    max_result_chars: int,
    idempotency_key: str | None,
    session: Any,
    request_id: Any,
    progress: ProgressFn | None,
    send_log: LogFn | None,
    asker: Asker | None,
) -> tuple[RegisteredTool, ToolContext | None] | types.CallToolResult:
    """The tool and the context it runs with (None for a tool that reads none); or the error result for a name
    unknown or outside the grant."""
    tool = registry.get(name)
    if tool is None:
        log.info("agent %r called unknown tool %s", grant.agent, errors.quoted(name))
        known = [n for n in registry.names() if grant.allows(n)]
        return _failed("unknown_tool", errors.unknown_tool(name, known), max_result_chars)
    if not grant.allows(tool.name):
        log.warning("refused: agent %r called tool %r outside its grant", grant.agent, tool.name)
        return _failed("refused", errors.refused(tool.name, grant.agent), max_result_chars)
    if not tool.injected and tool.isolation != "process":
        return tool, None  # it reads none: none is made (a frozen dataclass of nine fields costs µs a call)
    context = ToolContext(
        tool=tool.name,
        agent=grant.agent,
        idempotency_key=idempotency_key,
        session=session,
        request_id=request_id,
        progress_fn=progress,
        log_fn=send_log,
    )
    if asker is not None:
        context = dataclasses.replace(context, asker=asker)
    return tool, context


async def execute(
    tool: RegisteredTool,
    arguments: dict[str, Any] | None,
    context: ToolContext | None,
    *,
    max_result_chars: int,
    timeout_s: float | None = None,
    raise_protocol_errors: bool = False,
) -> types.CallToolResult:
    answered = await answer(
        tool,
        arguments,
        context,
        max_result_chars=max_result_chars,
        timeout_s=timeout_s,
        raise_protocol_errors=raise_protocol_errors,
    )
    return answered.call_result() if isinstance(answered, TextAnswer) else answered


async def answer(
    tool: RegisteredTool,
    arguments: dict[str, Any] | None,
    context: ToolContext | None,
    *,
    max_result_chars: int,
    timeout_s: float | None = None,
    raise_protocol_errors: bool = False,
) -> types.CallToolResult | TextAnswer:
    """`execute`'s outcome, but an answer that is one text block within `max_result_chars` as a TextAnswer (its
    `call_result()` is what `execute` gives): an in-process caller reads its text and structured value directly."""
    try:
        validated = tool.model.model_validate(arguments or {})
    except ValidationError as exc:
        text = errors.bad_arguments(tool.name, describe_problems(exc), tool.schema)
        return _failed("bad_arguments", text, max_result_chars)

    timeout = tool.policy.timeout_s if timeout_s is None else min(timeout_s, tool.policy.timeout_s)
    scope: anyio.CancelScope | None = None
    try:
        if tool.awaits_nothing and tool.limiter is None and tool.isolation != "process":
            # nothing to cancel: a timeout is delivered at an await, and it has none (functions/awaits.py)
            value = await _invoke(tool, arguments or {}, validated, context, max_result_chars)
        else:
            with anyio.move_on_after(timeout) as scope:
                if tool.limiter is None:
                    value = await _invoke(tool, arguments or {}, validated, context, max_result_chars)
                else:
                    async with tool.limiter:
                        value = await _invoke(tool, arguments or {}, validated, context, max_result_chars)
    except InputNeeded:  # the call ends here with the question; the client calls again with the answer
        raise
    except ClientLacks as exc:  # a protocol refusal (-32021): nothing ran that relied on what the client lacks
        raise exc.error() from None
    except ElicitationUnavailable as exc:
        return _failed("tool_failed", errors.tool_failed(tool.name, str(exc)), max_result_chars)
    except Exception as exc:  # a tool failure is a result, never a crash; its message is cut, never hidden
        if raise_protocol_errors and isinstance(exc, MCPError):
            raise
        raised = exc.type_name if isinstance(exc, WorkerRaised) else type(exc).__name__
        message = errors.clip(str(exc) or raised, max_result_chars)
        log.warning("tool %s raised %s: %s", tool.name, raised, message)
        return _failed("tool_failed", errors.tool_failed(tool.name, message), max_result_chars)
    if scope is not None and scope.cancelled_caught:
        log.warning("tool %s timed out after %gs and was %s", tool.name, timeout, _STOPPED[_where(tool)])
        return _failed("timeout", errors.timed_out(tool.name, timeout), max_result_chars)
    if isinstance(value, _Finished):
        return value.result
    try:
        return answer_of(value, max_result_chars, tool=tool.name, output=tool.output)
    except Exception as exc:
        problem = errors.clip(f"its result could not be serialised: {exc}", max_result_chars)
        return _failed("tool_failed", errors.tool_failed(tool.name, problem), max_result_chars)


def _failed(kind: ErrorKind, text: str, max_result_chars: int) -> types.CallToolResult:
    """An error result, cut like any result: an error never carries more text than a result may."""
    return cut(failed_call(kind, text), max_result_chars)


@dataclass(frozen=True)
class _Finished:
    """A result a worker process already made (and cut)."""

    result: types.CallToolResult


_STOPPED = {
    "process": "stopped (its worker process was killed)",
    "loop": "cancelled",
    "thread": "abandoned: its thread runs on until the function returns (isolation='process' would stop it)",
}


def _where(tool: RegisteredTool) -> str:
    return "process" if tool.isolation == "process" else "loop" if tool.is_async else "thread"


async def _invoke(
    tool: RegisteredTool,
    arguments: dict[str, Any],
    validated: BaseModel,
    context: ToolContext | None,
    max_result_chars: int,
) -> Any:
    """`context`: None when the tool reads none (no injected parameter, runs here); a bare one is made if it does."""
    if tool.isolation == "process" and tool.workers is not None:
        context = context or ToolContext(tool=tool.name)
        return _Finished(await tool.workers.run(tool, arguments, context, max_result_chars=max_result_chars))
    # the model's fields read directly: dict(validated) first looks for a `keys` attribute through pydantic's
    # __getattr__, which costs ~6 µs a call
    kwargs = {**validated.__dict__, **(validated.__pydantic_extra__ or {})}
    for param, kind in tool.injected.items():
        context = context or ToolContext(tool=tool.name)
        kwargs[param] = context if kind == "context" else context.idempotency_key
    if tool.is_async:
        return await on_loop(tool.name, tool.fn(**kwargs))  # its steps timed: the watchdog names a tool that stalls
    # A sync function may block; a worker thread keeps the loop serving other calls. It cannot be interrupted,
    # so on timeout the result is dropped and the thread is abandoned.
    return await anyio.to_thread.run_sync(partial(tool.fn, **kwargs), abandon_on_cancel=True)
