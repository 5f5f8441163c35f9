"""Running tools as tasks: a task-augmented call is stored, answered with its handle at once, and run in the
background by the replica that took it; the replica stamps its running tasks (the heartbeat), and stops the ones a
`tasks/cancel` marked, wherever that cancel arrived (the worker process too, under isolation="process")."""

import logging
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import TaskGroup
from mcp.shared.exceptions import MCPError

from toolwire_server.auth.access import Grant
from toolwire_server.functions.context import ToolContext
from toolwire_server.functions.elicit import AskFn, TaskAsker
from toolwire_server.tasks.store import HEARTBEAT_S, TaskRecord, TaskStore, process_owner
from toolwire_server.tools.execution import execute
from toolwire_server.tools.registry import RegisteredTool

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


@dataclass(frozen=True)
class FirstQuestions:
    """An `ask_before_task` tool asked as it started: the call answers with these questions (an InputRequiredResult)
    and the task, parked on them, is handed out when they are answered (`answer_first`)."""

    record: TaskRecord
    requests: dict[str, Any]


class TaskEngine:
    """One per server: creates tasks, runs them in its task group, and keeps their store rows current."""

    def __init__(self, store: TaskStore, *, max_result_chars: int) -> None:
        self.store = store
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
        """Store the task (durably, before its handle is sent) and start running it. A tool that completes within
        QUICK_S is answered with its result (the SEP's immediate-result shortcut), else the task is. `capabilities`
        (the calling client's) say which questions the tool may ask it (`ctx.elicit`). An `ask_before_task` tool's
        first questions, asked within ASK_FIRST_S, are answered instead (FirstQuestions)."""
        if self._group is None:
            raise MCPError(code=types.INTERNAL_ERROR, message="the task engine is not running")
        now = time.time()
        record = TaskRecord(
            task_id=secrets.token_urlsafe(24),  # an unguessable handle: the spec lets it act as a bearer token
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
        scope = anyio.CancelScope()
        self._running[record.task_id] = scope
        finished = self._finished[record.task_id] = anyio.Event()
        self._group.start_soon(self._run, record.task_id, tool, grant, arguments, capabilities, scope)
        if tool.ask_before_task:
            self._first[record.task_id] = {}
        with anyio.move_on_after(ASK_FIRST_S if tool.ask_before_task else QUICK_S):
            await finished.wait()
        self._finished.pop(record.task_id, None)
        asked = self._first.pop(record.task_id, None)
        if asked:
            return FirstQuestions(record, asked)
        return self._quick.pop(record.task_id, record)

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

    async def _run(
        self,
        task_id: str,
        tool: RegisteredTool,
        grant: Grant,
        arguments: dict[str, Any] | None,
        capabilities: types.ClientCapabilities | None,
        scope: Any,
    ) -> None:
        noted = [-NOTE_EVERY_S]

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if time.monotonic() - noted[0] < NOTE_EVERY_S:  # a chatty tool does not write the store on every report
                return
            noted[0] = time.monotonic()
            where = f"{done:g}/{total:g}" if total else f"{done:g}"
            await self.store.note(task_id, f"{where}: {message}" if message else where)

        ask = self._asker(task_id)  # a task's questions, raw (ask_fn) or as elicitations (asker), are its rounds
        context = ToolContext(
            tool=tool.name, agent=grant.agent, progress_fn=progress, ask_fn=ask, asker=TaskAsker(ask, capabilities)
        )
        try:
            with scope:
                result = await execute(
                    tool, arguments, context, max_result_chars=self.max_result_chars, raise_protocol_errors=True
                )
            if scope.cancel_called:
                with anyio.CancelScope(shield=True):
                    await self.store.finish(task_id, "cancelled", message="cancelled on request")
                return
            body = result.model_dump(by_alias=True, exclude_none=True, mode="json")
            body.pop("resultType", None)
            with anyio.CancelScope(shield=True):
                await self.store.finish(task_id, "completed", result=body)
            if (finished := self._finished.get(task_id)) is not None:
                self._quick[task_id] = result
                finished.set()
        except MCPError as exc:  # a protocol error the tool raised: the task failed, with that JSON-RPC error
            error = exc.error.model_dump(by_alias=True, exclude_none=True, mode="json")
            with anyio.CancelScope(shield=True):
                await self.store.finish(task_id, "failed", message=exc.error.message, error=error)
        except anyio.get_cancelled_exc_class():
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
