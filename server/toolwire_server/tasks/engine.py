"""Running tools as tasks: a task-augmented call runs through the call pipeline (tools/pipeline.py) in the
background of the replica that took it; once admitted (its limits spent, its arguments valid) it is stored and
answered with its handle, and its `in_flight` slot and its audit record last until it ends. The replica stamps its
running tasks (the heartbeat), and stops the ones a `tasks/cancel` marked, wherever that cancel arrived (the worker
process too, under isolation="process")."""

import logging
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import TaskGroup
from mcp.shared.exceptions import MCPError

from toolwire_server.auth.access import Grant
from toolwire_server.functions.context import ToolContext
from toolwire_server.functions.elicit import AskFn, TaskAsker
from toolwire_server.tasks.store import HEARTBEAT_S, TaskRecord, TaskStore, process_owner
from toolwire_server.tools.pipeline import result_of, run
from toolwire_server.tools.registry import RegisteredTool, Registry
from toolwire_server.tools.request import CallRequest

log = logging.getLogger("toolwire.server.tasks")

TTL_MS = 3_600_000
"""How long a task and its result are kept after it was created (an hour)."""
POLL_MS = 500
"""The polling interval suggested to clients."""
QUICK_S = 0.1
"""How long a call waits for its task before it answers with the handle: a quick tool costs no poll."""
NOTE_EVERY_S = 0.5
"""At most one progress line per task stored in this time."""
ASK_FIRST_S = 2.0
"""How long the call of an `ask_before_task` tool waits for its first questions before it answers with the handle."""


@dataclass
class _Launch:
    """A task-augmented call on its way: `record` once it is stored (admitted), `refused` if it ended before."""

    task_id: str
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    decided: anyio.Event = field(default_factory=anyio.Event)
    record: TaskRecord | None = None
    refused: types.CallToolResult | None = None
    failure: Exception | None = None
    """What the pipeline raised before the task was stored (the store refused it): raised to the call."""


@dataclass(frozen=True)
class FirstQuestions:
    """An `ask_before_task` tool asked as it started: the call answers with these questions (an InputRequiredResult)
    and the task, parked on them, is handed out when they are answered (`answer_first`)."""

    record: TaskRecord
    requests: dict[str, Any]


class TaskEngine:
    """One per server: creates tasks, runs them in its task group, and keeps their store rows current."""

    def __init__(self, store: TaskStore, registry: Registry, *, max_result_chars: int) -> None:
        self.store, self.registry = store, registry
        self.owner = process_owner()
        self.max_result_chars = max_result_chars
        self._group: TaskGroup | None = None
        self._running: dict[str, anyio.CancelScope] = {}
        self._answered: dict[str, anyio.Event] = {}
        self._finished: dict[str, anyio.Event] = {}
        """Tasks whose call still waits QUICK_S for them; `_quick` holds the results of those that completed."""
        self._quick: dict[str, types.CallToolResult] = {}
        self._first: dict[str, dict[str, Any]] = {}
        """Tasks of `ask_before_task` tools whose call still waits for their first questions (filled by `_asker`)."""

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """While the server runs: the background task group and the heartbeat. On the way out, tasks still
        running are cancelled and recorded failed (the process is stopping), not left "working"."""
        async with anyio.create_task_group() as group:
            self._group = group
            group.start_soon(self._beat)
            try:
                yield
            finally:  # the group's cancel reaches each running task as "the server stopped", not "cancelled"
                self._group = None
                group.cancel_scope.cancel()
        self.store.close()

    async def start(
        self,
        tool: RegisteredTool,
        grant: Grant,
        arguments: dict[str, Any] | None,
        capabilities: types.ClientCapabilities | None = None,
    ) -> TaskRecord | types.CallToolResult | FirstQuestions:
        """Run the call through the call pipeline in the background; once it passed its limits and arguments the
        task is stored (durably, before its handle is sent), and it runs on. A call refused before that (a limit,
        bad arguments) is answered with its result and makes no task. A tool that completes within QUICK_S is
        answered with its result (the SEP's immediate-result shortcut), else the task is. `capabilities` (the
        calling client's) say which questions the tool may ask it (`ctx.elicit`). An `ask_before_task` tool's first
        questions, asked within ASK_FIRST_S, are answered instead (FirstQuestions)."""
        if self._group is None:
            raise MCPError(code=types.INTERNAL_ERROR, message="the task engine is not running")
        launch = _Launch(secrets.token_urlsafe(24))  # an unguessable handle: the spec lets it act as a bearer token
        task_id = launch.task_id
        finished = self._finished[task_id] = anyio.Event()
        if tool.ask_before_task:
            self._first[task_id] = {}
        request = CallRequest(
            self.registry,
            grant,
            tool.name,
            arguments,
            max_result_chars=self.max_result_chars,
            context=self._context(task_id, tool, grant, capabilities),
            admitted=partial(self._store, launch, tool, grant),
            raise_protocol_errors=True,
        )
        self._group.start_soon(self._run, request, launch)
        await launch.decided.wait()
        if launch.record is None:  # refused before it became a task: the call's answer is why
            self._finished.pop(task_id, None)
            self._first.pop(task_id, None)
            if launch.refused is not None:
                return launch.refused
            if launch.failure is not None:  # e.g. the task store is away: this call's error, not the server's
                raise launch.failure
            raise MCPError(code=types.INTERNAL_ERROR, message="the server stopped before the task started")
        with anyio.move_on_after(ASK_FIRST_S if tool.ask_before_task else QUICK_S):
            await finished.wait()
        self._finished.pop(task_id, None)
        asked = self._first.pop(task_id, None)
        if asked:
            return FirstQuestions(launch.record, asked)
        return self._quick.pop(task_id, launch.record)

    async def _store(self, launch: "_Launch", tool: RegisteredTool, grant: Grant) -> None:
        """The call was admitted (tools/stages.py `Admitted`): the task is stored and its caller answered."""
        now = time.time()
        record = TaskRecord(
            task_id=launch.task_id,
            agent=grant.agent or "",
            tool=tool.name,
            status="working",
            status_message=None,
            created_at=now,
            updated_at=now,
            ttl_ms=TTL_MS,
            poll_ms=POLL_MS,
            result=None,
            error=None,
            input_requests=None,
            input_responses=None,
            owner=self.owner,
            heartbeat_at=now,
            cancel_requested=False,
        )
        await self.store.create(record)
        self._running[launch.task_id] = launch.scope
        launch.record = record
        launch.decided.set()

    async def answer_first(self, task_id: str, agent: str, responses: dict[str, Any]) -> TaskRecord | None:
        """The answers to a task's first questions came with the call again: record them (as `tasks/update` would)
        and hand out the task; None: no such task of this agent. Sent again after that, the answers change nothing
        (only outstanding questions take answers) and the same task is handed out."""
        if not await self.store.answer(task_id, agent, responses):
            return None
        await self.answered(task_id)
        return await self.store.get(task_id, agent)

    async def cancel(self, task_id: str, agent: str) -> bool:
        """Mark the agent's task cancelled-on-request and stop it now if it runs here; False: no such task."""
        if not await self.store.request_cancel(task_id, agent):
            return False
        scope = self._running.get(task_id)
        if scope is not None:
            scope.cancel()
        return True

    async def answered(self, task_id: str) -> None:
        """A `tasks/update` reached this replica: wake the task waiting for it (others poll the store)."""
        event = self._answered.get(task_id)
        if event is not None:
            event.set()

    def _context(
        self, task_id: str, tool: RegisteredTool, grant: Grant, capabilities: types.ClientCapabilities | None
    ) -> ToolContext:
        """The task's context: its progress and its questions go to the task store (read by tasks/get)."""
        noted = [-NOTE_EVERY_S]

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if time.monotonic() - noted[0] < NOTE_EVERY_S:  # a chatty tool does not write the store on every report
                return
            noted[0] = time.monotonic()
            where = f"{done:g}/{total:g}" if total else f"{done:g}"
            await self.store.note(task_id, f"{where}: {message}" if message else where)

        ask = self._asker(task_id)  # a task's questions, raw (ask_fn) or as elicitations (asker), are its rounds
        return ToolContext(
            tool=tool.name, agent=grant.agent, progress_fn=progress, ask_fn=ask, asker=TaskAsker(ask, capabilities)
        )

    async def _run(self, request: CallRequest, launch: "_Launch") -> None:
        """The whole call, in the background: its limits, its audit record (when the task ends), the tool."""
        task_id, scope = launch.task_id, launch.scope
        try:
            with scope:
                answer = await run(request)
            if launch.record is None:  # refused (a limit, bad arguments): no task was made
                launch.refused = result_of(answer)
                return
            if scope.cancel_called:
                with anyio.CancelScope(shield=True):
                    await self.store.finish(task_id, "cancelled", message="cancelled on request")
                return
            result = result_of(answer)
            body = result.model_dump(by_alias=True, exclude_none=True, mode="json")
            body.pop("resultType", None)
            with anyio.CancelScope(shield=True):
                await self.store.finish(task_id, "completed", result=body)
            if (finished := self._finished.get(task_id)) is not None:
                self._quick[task_id] = result
                finished.set()
        except Exception as exc:
            if launch.record is None:  # before the task was stored (the store refused it): the call's error
                launch.failure = exc
            elif isinstance(exc, MCPError):  # a protocol error the tool raised: the task failed, with that error
                error = exc.error.model_dump(by_alias=True, exclude_none=True, mode="json")
                with anyio.CancelScope(shield=True):
                    await self.store.finish(task_id, "failed", message=exc.error.message, error=error)
            else:
                raise
        except anyio.get_cancelled_exc_class():
            if launch.record is not None:
                with anyio.CancelScope(shield=True):
                    await self.store.finish(
                        task_id,
                        "failed",
                        message="the server stopped before the task finished",
                        error={"code": types.INTERNAL_ERROR, "message": "the server stopped before the task finished"},
                    )
            raise
        finally:
            self._running.pop(task_id, None)
            launch.decided.set()

    def _asker(self, task_id: str) -> AskFn:
        """The input seam: park the task in `input_required` with `requests` (key -> an MRTR input request such as
        {"method": "elicitation/create", "params": {...}}) and return the answers `tasks/update` brings."""

        async def ask(requests: dict[str, Any]) -> dict[str, Any]:
            answers: dict[str, Any] = {}
            await self.store.ask(task_id, requests)
            first, finished = self._first.get(task_id), self._finished.get(task_id)
            if first is not None and finished is not None:  # its call still waits: these go out in its answer
                first.update(requests)
                finished.set()
            while True:
                event = self._answered[task_id] = anyio.Event()
                taken = await self.store.take_answers(task_id)
                if taken is not None:
                    answers.update(taken)
                    self._answered.pop(task_id, None)
                    return answers
                with anyio.move_on_after(HEARTBEAT_S):  # an answer that reached another replica is in the store
                    await event.wait()

        return ask

    async def _beat(self) -> None:
        while True:
            await anyio.sleep(HEARTBEAT_S)
            try:
                cancelled = await self.store.heartbeat(self.owner, list(self._running))
                for task_id in cancelled:
                    scope = self._running.get(task_id)
                    if scope is not None:
                        scope.cancel()
                if self.store.opened:
                    await self.store.purge(time.time())
            except Exception:  # the store is down for a moment: tasks run on, the next beat tries again
                log.exception("task heartbeat failed")
