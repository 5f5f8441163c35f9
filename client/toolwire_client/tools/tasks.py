"""Following an MCP task (the `io.modelcontextprotocol/tasks` extension, SEP-2663) to its end, for McpSource.

A server may answer a tools/call with a task handle (`resultType: "task"`): the call is then followed with
`tasks/get`, starting at the server's suggested interval and backing off, until the task ends or the call's timeout
(then `tasks/cancel`). The task id is saved in the run's pending call *before* the first `tasks/get`, so a run
killed while the task works resumes by following the same task: the tool is never called again for it.

`input_required` is where elicitation plugs in: `InputHandler` gets the task's `inputRequests` and returns the
`inputResponses` sent with `tasks/update`, or a result that ends the call: one carrying the question pauses the run
(the task waits on the server for the answer `resume` brings), any other fails it (the task is cancelled). With no
handler the task is cancelled and the call fails, readably.

A handshake-era server may speak the 2025-11-25 revision's experimental tasks instead (server-everything): when its
capabilities say `tasks.requests.tools.call`, a tool it lists with `execution.taskSupport: "required"` is offered,
called with `params.task`, and followed by the same loop (`legacy=True`): its `CreateTaskResult.task` is the handle,
`pollInterval` the interval, and a completed task's result is fetched with `tasks/result`. Its questions come on the
`tasks/result` stream, which this loop does not hold open: a task that asks is cancelled, readably."""

import time
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import replace
from typing import Any, ClassVar, Literal

import anyio
import mcp_types as types
from mcp import MCPError
from mcp.client.session import ClientSession
from pydantic import BaseModel, Field

from toolwire_client.tools.source import ToolRequest
from toolwire_otel.tasks import quiet_poll, record_end, record_poll, task_span
from toolwire_shared import errors
from toolwire_shared.mcp_kit.sdk import send_raw_request
from toolwire_shared.results import TaskRun, ToolResult, failed, from_call_result

EXTENSION = "io.modelcontextprotocol/tasks"
MAX_POLL_S = 5.0
"""The longest wait between two polls of a long task."""
BACKOFF = 1.5
LEGACY_TTL_MS = 3_600_000
"""How long a 2025-11-25 task's result is asked to be kept (the server may keep it less)."""
CANCEL_WAIT_S = 5.0
"""How long a `tasks/cancel` sent on timeout (or on the way out) may take before it is given up."""


class Raw(BaseModel, extra="allow"):
    """An answer as it came (a tools/call's CallToolResult or CreateTaskResult, told apart by `resultType`)."""


async def _send(session: ClientSession, request: types.Request[Any, Any]) -> dict[str, Any]:
    answer = await session.send_request(request, Raw)
    return dict(answer.model_extra or {})


InputHandler = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | ToolResult]]
"""(tool name, the task's outstanding inputRequests) -> inputResponses, or the call's end (tools/elicitation.py)."""
SaveTask = Callable[[str], Awaitable[None]]
"""Record the task id in the run's pending call, durably, before it is followed."""


class TaskIdParams(types.RequestParams):
    task_id: str = Field(alias="taskId")


class UpdateTaskParams(TaskIdParams):
    input_responses: dict[str, Any] = Field(alias="inputResponses")


class GetTask(types.Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams
    name_param: ClassVar[str | None] = "taskId"  # SEP-2663: Mcp-Name carries the task id (routing)


class CancelTask(types.Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdParams
    name_param: ClassVar[str | None] = "taskId"


class TaskResult(types.Request[TaskIdParams, Literal["tasks/result"]]):
    method: Literal["tasks/result"] = "tasks/result"
    params: TaskIdParams


class UpdateTask(types.Request[UpdateTaskParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: UpdateTaskParams
    name_param: ClassVar[str | None] = "taskId"


def only_as_legacy_task(tool: types.Tool) -> bool:
    """True for a tool a handshake-era (2025-11-25) listing says runs only as a task, in that revision's experimental
    tasks, which toolwire does not speak (every call would fail), so it is not offered. A 2026-07-28 listing carries no
    such field: there the server decides per call and this module follows."""
    return tool.execution is not None and tool.execution.task_support == "required"


def runs_legacy_tasks(capabilities: types.ServerCapabilities | None) -> bool:
    """Whether a handshake-era server runs a tools/call as a 2025-11-25 task when asked (`params.task`)."""
    requests = capabilities.tasks.requests if capabilities and capabilities.tasks else None
    return bool(requests and requests.tools and requests.tools.call is not None)


async def call_legacy(session: ClientSession, request: ToolRequest, meta: dict[str, Any], started: float) -> ToolResult:
    """A tools/call as a 2025-11-25 task (`params.task`), its id saved before it is followed; or the task a crashed
    process saved for this call, followed again (never sent again). Sent raw: the SDK checks a 2025-11-25 tools/call
    answer as a CallToolResult, which a CreateTaskResult is not."""
    call, saved = request.call, saved_task(request)
    task: Any = {"taskId": saved, "status": "working"}
    if saved is None:
        params = {"name": call.name, "arguments": call.arguments, "task": {"ttl": LEGACY_TTL_MS}, "_meta": meta}
        created = await send_raw_request(session, "tools/call", params, {"timeout": request.timeout_s})
        task = created.get("task")
        if not (isinstance(task, dict) and isinstance(task.get("taskId"), str)):
            raise MCPError(code=types.INTERNAL_ERROR, message="it answered a task-augmented call without a task")
        if request.run.note_task is not None:
            await request.run.note_task(call.id, task["taskId"])
    return await follow(session, request, task, started=started, resumed=saved is not None, legacy=True)


def is_task(raw: dict[str, Any]) -> bool:
    return raw.get("resultType") == "task" and isinstance(raw.get("taskId"), str)


def saved_task(request: ToolRequest) -> str | None:
    """The task a crashed process already created for this call (saved in its pending call), if any."""
    state = request.run.state
    if state is None:
        return None
    return next((p.task_id for p in state.pending if p.call.id == request.call.id and p.task_id), None)


async def follow(
    session: ClientSession,
    request: ToolRequest,
    task: dict[str, Any],
    *,
    started: float,
    resumed: bool = False,
    on_input: InputHandler | None = None,
    legacy: bool = False,
) -> ToolResult:
    """Poll the task until it ends or the call's time is up; its end as the call's result, which names the task
    and its last status (`ToolResult.task`, for the step table). `legacy`: a 2025-11-25 task."""
    on_input = None if legacy else on_input
    result, status = await _followed(
        session, request, task, started=started, resumed=resumed, on_input=on_input, legacy=legacy
    )
    return replace(result, task=TaskRun(task_id=str(task["taskId"]), status=status))


async def _followed(
    session: ClientSession,
    request: ToolRequest,
    task: dict[str, Any],
    *,
    started: float,
    resumed: bool,
    on_input: InputHandler | None,
    legacy: bool,
) -> tuple[ToolResult, str]:
    call, task_id = request.call, str(task["taskId"])
    deadline = started + request.timeout_s
    polls, status = 0, str(task.get("status", "working"))
    said: str | None = None
    with task_span(call.name, task_id, resumed=resumed) as span:
        try:
            while True:  # a CreateTaskResult carries no result, whatever its status: only a tasks/get does
                wait = 0.0 if resumed and not polls else _interval(task, polls)
                if time.perf_counter() + wait > deadline:
                    await anyio.sleep(max(0.0, deadline - time.perf_counter()))
                    await _cancel(session, task_id)
                    record_end(span, "timeout", polls)
                    text = errors.timed_out(call.name, request.timeout_s) + " (its task was cancelled)"
                    return failed(call.id, call.name, "timeout", text, since=started), "cancelled"
                await anyio.sleep(wait)
                with quiet_poll(span):
                    task = await _send(session, GetTask(params=TaskIdParams(taskId=task_id)))
                polls += 1
                status = str(task.get("status"))
                record_poll(span, polls, status, task.get("statusMessage"))
                if status in ("completed", "failed", "cancelled"):
                    break
                said = await _progress(request, task, said)
                if status == "input_required":
                    answered = await _answer(session, request, task, on_input)
                    if answered is not None:  # paused on a question (the task waits), or failed (cancelled)
                        status = "input_required" if answered.input_wanted is not None else "cancelled"
                        record_end(span, status, polls)
                        return answered, status
            if legacy and status == "completed":  # 2025-11-25: the result is asked for, not inlined
                task = {**task, "result": await _send(session, TaskResult(params=TaskIdParams(taskId=task_id)))}
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):  # the call was given up (the run stops): the task stops too
                await _cancel(session, task_id)
            raise
        record_end(span, status, polls)
    return _ended(request, task, status, started), status


def _interval(task: dict[str, Any], polls: int) -> float:
    """The server's suggested interval (honoured: never polled faster), growing by BACKOFF up to MAX_POLL_S."""
    suggested = task.get("pollIntervalMs", task.get("pollInterval"))  # 2026-07-28's name, 2025-11-25's
    base = suggested / 1000 if isinstance(suggested, int | float) and suggested > 0 else 0.5
    return max(base, min(MAX_POLL_S, base * BACKOFF ** max(0, polls - 2)))


async def _progress(request: ToolRequest, task: dict[str, Any], said: str | None) -> str | None:
    """A task's statusMessage is its progress line, shown like any call's progress (a message only: no count), once
    (polls that find the same message say nothing). Returns the message last shown."""
    message = task.get("statusMessage")
    if message == said or not isinstance(message, str) or task.get("status") != "working":
        return said
    if request.on_progress is not None:
        await request.on_progress(0, None, message)
    return message


async def _answer(
    session: ClientSession, request: ToolRequest, task: dict[str, Any], on_input: InputHandler | None
) -> ToolResult | None:
    """Answer the task's outstanding requests (None: answered, follow on); or the call's end: paused on a question
    (the task left waiting), or failed (the task cancelled: also without a handler)."""
    call, task_id = request.call, str(task["taskId"])
    requests = task.get("inputRequests") or {}
    if on_input is None:
        await _cancel(session, task_id)
        text = errors.tool_failed(
            call.name,
            "its task asked for input (an elicitation) and this run cannot answer one; the task was cancelled",
        )
        return failed(call.id, call.name, "tool_failed", text)
    responses = await on_input(call.name, requests)
    if isinstance(responses, ToolResult):
        if responses.input_wanted is None:  # a question this run cannot answer: the task would wait for ever
            await _cancel(session, task_id)
        return responses
    params = UpdateTaskParams(taskId=task_id, inputResponses=responses)
    await _send(session, UpdateTask(params=params))
    return None


async def _cancel(session: ClientSession, task_id: str) -> None:
    with anyio.move_on_after(CANCEL_WAIT_S):
        # cooperative and best-effort: the task's TTL ends it anyway
        with suppress(MCPError, OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await _send(session, CancelTask(params=TaskIdParams(taskId=task_id)))


def _ended(request: ToolRequest, task: dict[str, Any], status: str, started: float) -> ToolResult:
    call = request.call
    if status == "completed" and isinstance(task.get("result"), dict):
        return from_call_result(call.id, call.name, types.CallToolResult.model_validate(task["result"]), since=started)
    if status == "cancelled":
        why = task.get("statusMessage") or "cancelled by the server"
        return failed(
            call.id, call.name, "tool_failed", errors.tool_failed(call.name, f"its task was {why}"), since=started
        )
    error: dict[str, Any] = task["error"] if isinstance(task.get("error"), dict) else {}
    message = str(error.get("message") or task.get("statusMessage") or "its task failed")
    return failed(call.id, call.name, "tool_failed", errors.tool_failed(call.name, message), since=started)
