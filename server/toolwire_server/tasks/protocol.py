"""The tasks extension on the wire (SEP-2663, 2026-07-28): whether a tools/call becomes a task, the
`CreateTaskResult` handle, and the `tasks/get`, `tasks/update` and `tasks/cancel` handlers. Each handler answers
only the calling agent's tasks: another agent's task id is "unknown task" (-32602), exactly like a made-up one."""

import json
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_NAME_HEADER, decode_header_value
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field

from toolwire_server.auth.access import Grant
from toolwire_server.tasks.engine import FirstQuestions, TaskEngine
from toolwire_server.tasks.store import TaskRecord, is_orphan
from toolwire_server.tools.registry import RegisteredTool

EXTENSION = "io.modelcontextprotocol/tasks"
_ORPHANED = "the server process running this task stopped before it finished"


class TaskIdParams(types.RequestParams):
    task_id: str = Field(alias="taskId", min_length=1, max_length=200)


class UpdateTaskParams(TaskIdParams):
    input_responses: dict[str, Any] = Field(alias="inputResponses")


def declared(ctx: ServerRequestContext[Any, Any]) -> bool:
    """The request's client declared the extension (per request in the 2026-07-28 era); on a handshake-era
    connection the extension is not defined, so never (SEP-2663, backward compatibility)."""
    session = ctx.session
    if getattr(session, "protocol_version", None) not in MODERN_PROTOCOL_VERSIONS:
        return False
    capabilities = session.client_capabilities
    extensions = capabilities.extensions if capabilities else None
    return extensions is not None and EXTENSION in extensions


def missing_capability(what: str) -> MCPError:
    return MCPError(
        code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=f"{what} needs the {EXTENSION} extension: declare it in the request's "
        "_meta['io.modelcontextprotocol/clientCapabilities'].extensions (protocol 2026-07-28)",
        data={"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
    )


def as_task(tool: RegisteredTool, ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether this call of `tool` runs as a task; a required-task tool called without the extension is refused."""
    if tool.task is None:
        return False
    if declared(ctx):
        return True
    if tool.task == "required":
        raise missing_capability(f"the tool '{tool.name}' runs only as a task: it")
    return False


def task_body(record: TaskRecord, *, detailed: bool) -> dict[str, Any]:
    """The `Task` fields; `detailed` (tasks/get) adds the status's own: result, error, or inputRequests."""
    status = record.status
    message = record.status_message
    if is_orphan(record, time.time()):
        status, message = "failed", _ORPHANED
    body: dict[str, Any] = {
        "taskId": record.task_id,
        "status": status,
        "createdAt": _iso(record.created_at),
        "lastUpdatedAt": _iso(record.updated_at),
        "ttlMs": record.ttl_ms,
        "pollIntervalMs": record.poll_ms,
    }
    if message:
        body["statusMessage"] = message
    if not detailed:
        return body
    if status == "completed" and record.result is not None:
        body["result"] = record.result
    elif status == "failed":
        body["error"] = record.error or {"code": types.INTERNAL_ERROR, "message": message or "the task failed"}
    elif status == "input_required":
        body["inputRequests"] = record.input_requests or {}
    return body


def created(record: TaskRecord) -> dict[str, Any]:
    """The `CreateTaskResult` a task-augmented tools/call is answered with: flat, `resultType: "task"`."""
    return {"resultType": "task", **task_body(record, detailed=False)}


FIRST_STATE_KEY = "toolwire.task"
"""In the requestState of an `ask_before_task` tool's first round: the task its answers go to. The server's
RequestStateBoundary seals the state (bound to the tool and its arguments), so a client cannot name another task."""


async def task_call(
    engine: TaskEngine, tool: RegisteredTool, grant: Grant, ctx: ServerRequestContext[Any, Any]
) -> types.CallToolResult | types.InputRequiredResult | dict[str, Any]:
    """A tools/call that runs as a task: its handle (a `CreateTaskResult`), its result when it was that quick, or
    the first questions of an `ask_before_task` tool; called again with their answers, that tool's task handle."""
    raw = ctx.params if isinstance(ctx.params, Mapping) else {}
    task_id = _first_round_task(raw.get("requestState"))
    if task_id is not None:
        responses = raw.get("inputResponses")
        answers = dict(responses) if isinstance(responses, Mapping) else {}
        record = await engine.answer_first(task_id, grant.agent or "", answers)
        if record is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown task {task_id[:60]!r} (or past its TTL)")
        return created(record)
    arguments = raw.get("arguments")
    started = await engine.start(
        tool, grant, dict(arguments) if isinstance(arguments, Mapping) else None, ctx.session.client_capabilities
    )
    if isinstance(started, FirstQuestions):
        state = json.dumps({FIRST_STATE_KEY: started.record.task_id})
        body = {"resultType": "input_required", "inputRequests": started.requests, "requestState": state}
        return types.InputRequiredResult.model_validate(body)
    return started if isinstance(started, types.CallToolResult) else created(started)


def _first_round_task(state: object) -> str | None:
    """The task a first round's (unsealed, checked) requestState names; None for any other state."""
    try:
        earlier = json.loads(state) if isinstance(state, str) else None
    except ValueError:
        return None
    task_id = earlier.get(FIRST_STATE_KEY) if isinstance(earlier, dict) else None
    return task_id if isinstance(task_id, str) else None


def add_handlers(server: Server[Any], engine: TaskEngine, agent_of: Any) -> None:
    """Serve tasks/get, tasks/update, tasks/cancel on `server` and advertise the extension. `agent_of(ctx)` is the
    calling agent's name (from its bearer token; "" where the transport names nobody)."""

    def gate(ctx: ServerRequestContext[Any, Any], method: str, task_id: str) -> str:
        if not declared(ctx):
            raise missing_capability(method)
        routed_by(ctx, task_id)
        agent: str = agent_of(ctx)
        return agent

    def unknown(task_id: str) -> MCPError:
        return MCPError(code=types.INVALID_PARAMS, message=f"unknown task {task_id[:60]!r} (or past its TTL)")

    async def on_get(ctx: ServerRequestContext[Any, Any], params: TaskIdParams) -> dict[str, Any]:
        record = await engine.store.get(params.task_id, gate(ctx, "tasks/get", params.task_id))
        if record is None:
            raise unknown(params.task_id)
        return {"resultType": "complete", **task_body(record, detailed=True)}

    async def on_update(ctx: ServerRequestContext[Any, Any], params: UpdateTaskParams) -> dict[str, Any]:
        agent = gate(ctx, "tasks/update", params.task_id)
        if not await engine.store.answer(params.task_id, agent, params.input_responses):
            raise unknown(params.task_id)
        await engine.answered(params.task_id)
        return {"resultType": "complete"}

    async def on_cancel(ctx: ServerRequestContext[Any, Any], params: TaskIdParams) -> dict[str, Any]:
        if not await engine.cancel(params.task_id, gate(ctx, "tasks/cancel", params.task_id)):
            raise unknown(params.task_id)
        return {"resultType": "complete"}

    server.add_request_handler("tasks/get", TaskIdParams, on_get)
    server.add_request_handler("tasks/update", UpdateTaskParams, on_update)
    server.add_request_handler("tasks/cancel", TaskIdParams, on_cancel)
    server.extensions[EXTENSION] = {}


def routed_by(ctx: ServerRequestContext[Any, Any], task_id: str) -> None:
    """Over HTTP the `Mcp-Name` header names the task, for a proxy to route on (SEP-2663, SEP-2243): a request
    whose header is missing or names another task is refused, so a proxy and this server never disagree."""
    headers = getattr(ctx.request, "headers", None)
    if headers is None:  # stdio: no headers to route on
        return
    if decode_header_value(headers.get(MCP_NAME_HEADER)) != task_id:
        raise MCPError(
            code=types.HEADER_MISMATCH,
            message=f"the {MCP_NAME_HEADER} header must be the request's taskId (SEP-2663 routing headers)",
        )


def _iso(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
