"""A remote A2A agent as a tool source: one `ask_NAME` tool whose call is an A2A task, followed to its end.

The message is sent with `returnImmediately`, so the answer is the task's handle; its id is saved in the run's
pending call (`RunContext.note_task`, as an MCP task's is, tools/tasks.py) *before* the task is first polled, so a
run killed while the remote agent works resumes by following the same task: the message is never sent twice. The
task is polled with tasks/get (backing off to MAX_POLL_S) until it ends, or until the call's timeout (then
tasks/cancel). An `input-required` task is the run's own question: the call pauses with an `InputWanted` (era
"task", the task's id) that `toolwire answer` answers with {"reply": "..."}, and the resumed call sends that reply
as a message on the same task, once (only while the task still asks that question), then follows it on.

a2a-sdk is imported when the source starts, not when toolwire does."""

import os
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import anyio

from toolwire_client.config import A2AAgentSpec
from toolwire_client.tools.elicitation import paused, saved_answer
from toolwire_client.tools.source import ToolRequest, ToolServerFailed, ToolSource, ToolTransportError, TransportInfo
from toolwire_client.tools.tasks import saved_task
from toolwire_shared import errors
from toolwire_shared.elicitation import InputAnswer, InputWanted
from toolwire_shared.results import TaskRun, ToolResult, failed
from toolwire_shared.tools import ToolSpec

if TYPE_CHECKING:
    from a2a.client import Client
    from a2a.types import Message, Task

FIRST_POLL_S = 0.2
MAX_POLL_S = 5.0
BACKOFF = 1.5
REPLY_KEY = "reply"
REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {REPLY_KEY: {"type": "string", "description": "what to tell the remote agent"}},
    "required": [REPLY_KEY],
}
INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"message": {"type": "string", "description": "what to ask the agent, in full"}},
    "required": ["message"],
    "additionalProperties": False,
}
ENDED = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}
NO_TEXT = "(its task completed with no text)"
ASKS = {"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"}


def a2a_sources(agents: list[A2AAgentSpec]) -> list[ToolSource]:
    return [
        A2ASource(spec.name, spec.url, os.environ.get(spec.token_env) if spec.token_env else None) for spec in agents
    ]


class A2ASource(ToolSource):
    def __init__(self, name: str, url: str, token: str | None = None) -> None:
        self.name, self.url, self.token = name, url, token
        self.tool = f"ask_{name}"
        self._client: Client | None = None
        self._http: Any = None
        self._spec: ToolSpec | None = None

    async def start(self) -> None:
        import httpx
        from a2a.client import A2ACardResolver, ClientConfig, ClientFactory

        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        self._http = httpx.AsyncClient(headers=headers, timeout=30)
        try:
            card = await A2ACardResolver(self._http, self.url).get_agent_card()
        except Exception as exc:
            await self.aclose()
            why = f"(an A2A agent) gave no Agent Card ({exc}); start it, or fix --a2a-agent"
            raise ToolServerFailed(self.name, self.url, "failed", why) from exc
        self._client = ClientFactory(ClientConfig(httpx_client=self._http, streaming=False)).create(card)
        skills = "; ".join(f"{s.name}: {s.description}" for s in card.skills)
        about = card.description + (f" Skills: {skills}" if skills else "")
        self._spec = ToolSpec(
            name=self.tool,
            description=f"Ask the A2A agent {card.name or self.name} to do something (one task). {about}",
            input_schema=INPUT_SCHEMA,
            source=self.name,
        )

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def transport_info(self) -> TransportInfo:
        return TransportInfo(transport="tcp", server_address=self.url)

    async def list_tools(self) -> list[ToolSpec]:
        return [self._spec] if self._spec is not None else []

    async def call(self, request: ToolRequest) -> ToolResult:
        from a2a.client import A2AClientError
        from a2a.utils.errors import A2AError

        started = time.perf_counter()
        try:
            return await self._call(request, started)
        except (A2AClientError, OSError) as exc:
            raise ToolTransportError(f"A2A agent {self.name} ({self.url}): {exc}") from exc
        except A2AError as exc:
            text = errors.tool_failed(request.call.name, f"the A2A agent refused: {exc.message}")
            return failed(request.call.id, request.call.name, "tool_failed", text, since=started)

    async def _call(self, request: ToolRequest, started: float) -> ToolResult:
        call = request.call
        task_id = saved_task(request)
        if task_id is None:
            message = call.arguments.get("message")
            if not isinstance(message, str) or not message.strip():
                text = errors.tool_failed(call.name, 'it needs {"message": "..."}: what to ask the agent')
                return failed(call.id, call.name, "bad_arguments", text, since=started)
            sent = await self._send(_message(message, None))
            if not sent.id:  # a plain reply, no task
                return ToolResult(call_id=call.id, name=call.name, content=_said(sent))
            task_id = sent.id
            if request.run.note_task is not None:
                await request.run.note_task(call.id, task_id)  # saved before the first poll
        else:
            reply = await self._reply(request, task_id)
            if reply is not None:
                return reply
        return await self._follow(request, task_id, started)

    async def _reply(self, request: ToolRequest, task_id: str) -> ToolResult | None:
        """On resume: the person's answer to the task's question, sent on the task once (only while the task still
        asks that question: a crash after the reply went out does not send it again). A decline or cancel cancels
        the task and ends the call."""
        saved = saved_answer(request.run, request.call.id)
        if saved is None or saved[0].task_id != task_id:
            return None
        wanted, given = saved
        task = await self._get(task_id)
        if task.status.state not in _states(ASKS) or _said(task) != wanted.message:
            return None
        if given.action != "accept":
            await self._cancel(task_id)
            text = errors.tool_failed(request.call.name, f"the person chose {given.action} when its task asked")
            return failed(request.call.id, request.call.name, "tool_failed", text)
        await self._send(_message(str((given.content or {}).get(REPLY_KEY, "")), task_id))
        return None

    async def _follow(self, request: ToolRequest, task_id: str, started: float) -> ToolResult:
        call, deadline, polls = request.call, started + request.timeout_s, 0
        try:
            while True:
                task = await self._get(task_id)
                state = _name(task.status.state)
                if state in ENDED:
                    return _ended(request, task, state, started)
                if state in ASKS:
                    asked = await self._asked(request, task, state)
                    if asked is not None:
                        return asked
                    continue
                wait = min(MAX_POLL_S, FIRST_POLL_S * BACKOFF**polls)
                polls += 1
                if time.perf_counter() + wait > deadline:
                    await anyio.sleep(max(0.0, deadline - time.perf_counter()))
                    await self._cancel(task_id)
                    text = errors.timed_out(call.name, request.timeout_s) + " (its A2A task was cancelled)"
                    return _with_task(failed(call.id, call.name, "timeout", text, since=started), task_id, "canceled")
                await anyio.sleep(wait)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):  # the run gave the call up: the remote task stops too
                await self._cancel(task_id)
            raise

    async def _asked(self, request: ToolRequest, task: "Task", state: str) -> ToolResult | None:
        """The task asks: answered at once by the run's `on_elicit` (None: sent, follow on), else the call pauses on
        the question (the task waits on the remote agent for the reply `toolwire answer` gives)."""
        call = request.call
        if state == "TASK_STATE_AUTH_REQUIRED":
            await self._cancel(task.id)
            text = errors.tool_failed(call.name, f"its A2A task wants authentication: {_said(task)}")
            return _with_task(failed(call.id, call.name, "tool_failed", text), task.id, "canceled")
        wanted = InputWanted(
            key=REPLY_KEY, mode="form", message=_said(task), requested_schema=REPLY_SCHEMA, era="task", task_id=task.id
        )
        if request.run.on_elicit is None:
            return _with_task(paused(call.id, call.name, wanted), task.id, "input-required")
        given: InputAnswer = await request.run.on_elicit(wanted)
        if given.action != "accept":
            await self._cancel(task.id)
            text = errors.tool_failed(call.name, f"{given.action} was the answer to its task's question")
            return _with_task(failed(call.id, call.name, "tool_failed", text), task.id, "canceled")
        await self._send(_message(str((given.content or {}).get(REPLY_KEY, "")), task.id))
        return None

    # -- the wire ------------------------------------------------------------------------------------------------
    def _wire(self) -> "Client":
        if self._client is None:
            raise ToolTransportError(f"A2A agent {self.name} was not started")
        return self._client

    async def _send(self, message: "Message") -> "Task":
        """message/send, returning at once: the task (or, for an agent that answers without one, a task-less
        stand-in whose status message is the reply)."""
        from a2a.types import SendMessageConfiguration, SendMessageRequest, Task, TaskState, TaskStatus

        request = SendMessageRequest(message=message, configuration=SendMessageConfiguration(return_immediately=True))
        async for event in self._wire().send_message(request):
            if event.HasField("task"):
                return event.task
            if event.HasField("message"):
                return Task(status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED, message=event.message))
        raise ToolTransportError(f"A2A agent {self.name} answered message/send with nothing")

    async def _get(self, task_id: str) -> "Task":
        from a2a.types import GetTaskRequest

        return await self._wire().get_task(GetTaskRequest(id=task_id))

    async def _cancel(self, task_id: str) -> None:
        from a2a.types import CancelTaskRequest

        with anyio.move_on_after(5.0):
            try:
                await self._wire().cancel_task(CancelTaskRequest(id=task_id))
            except Exception:  # best effort: the task may have ended
                return


def _message(text: str, task_id: str | None) -> "Message":
    import uuid

    from a2a.types import Message, Part, Role

    return Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, task_id=task_id or "", parts=[Part(text=text)])


def _states(names: set[str]) -> set[int]:
    from a2a.types import TaskState

    return {TaskState.Value(name) for name in names}


def _name(state: int) -> str:
    from a2a.types import TaskState

    return str(TaskState.Name(state))


def _said(task: "Task") -> str:
    """The task's status message as text."""
    return "\n".join(p.text for p in task.status.message.parts if p.HasField("text")).strip()


def _answer(task: "Task") -> str:
    """A completed task's answer: its artifacts' text, else its status message."""
    parts = [p.text for artifact in task.artifacts for p in artifact.parts if p.HasField("text")]
    return "\n".join(parts) if parts else _said(task)


def _ended(request: ToolRequest, task: "Task", state: str, started: float) -> ToolResult:
    call, status = request.call, state.removeprefix("TASK_STATE_").lower()
    if state == "TASK_STATE_COMPLETED":
        result = ToolResult(call_id=call.id, name=call.name, content=_answer(task) or NO_TEXT)
    else:
        why = _said(task) or f"its A2A task ended {status}"
        result = failed(
            call.id, call.name, "tool_failed", errors.tool_failed(call.name, f"{status}: {why}"), since=started
        )
    return _with_task(result, task.id, status)


def _with_task(result: ToolResult, task_id: str, status: str) -> ToolResult:
    return replace(result, task=TaskRun(task_id=task_id, status=status))
