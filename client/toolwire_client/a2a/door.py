"""The A2A request handler of `agent serve --a2a`: each A2A method on the run store. message/send and message/stream
start a run (a message with no task id) or continue one (a reply on its input-required task: a decision, or the
answer to a tool's question); tasks/get and tasks/cancel read and stop it. A caller sees only the runs it started
(tasks.run_id_prefix). Blocking sends and streams follow the run by reading the store, so a decision made elsewhere
(`toolwire approve`, the console) is seen as it is made, and the run is resumed here once nothing is left to decide
(with `--fleet`, fleet_drivers.py: the fleet is woken as the decision is recorded, and a worker goes on)."""

from collections.abc import AsyncGenerator
from typing import Any, NoReturn

import anyio
from a2a.server.context import ServerCallContext
from a2a.server.events.event_queue import Event
from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    InvalidParamsError,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskStatusUpdateEvent,
    UnsupportedOperationError,
)

from toolwire_client.a2a import replies
from toolwire_client.a2a.drivers import Drivers, NotCancelable
from toolwire_client.a2a.fleet_drivers import FleetDrivers
from toolwire_client.a2a.tasks import PAUSED, TERMINAL, run_id_prefix, task_of, task_state, waiting
from toolwire_client.config import open_run
from toolwire_client.fleet.decide import Decide, decide_and_wake
from toolwire_client.run.pending import PendingCall
from toolwire_client.run.state import RunState
from toolwire_client.store import ApprovalRefused, RunNotFound, SqlRunStore, approvals
from toolwire_client.store import answers as input_answers
from toolwire_shared.ids import new_run_id

POLL_S = 0.1
"""How often a blocking send or a stream reads the run while it works."""


def caller_of(context: ServerCallContext) -> str:
    """The agent of the caller's bearer token (the tokens file's name); "" on a server without tokens."""
    return context.user.user_name if context.user.is_authenticated else ""


class RunDoor(RequestHandler):
    store: SqlRunStore
    drivers: "Drivers | FleetDrivers"
    db: str | None

    def __init__(self, card: AgentCard) -> None:
        self.card = card

    def open(self, store: SqlRunStore, drivers: "Drivers | FleetDrivers", db: str | None = None) -> None:
        """The run store and the drivers, once the server has started (its lifespan)."""
        self.store, self.drivers, self.db = store, drivers, db

    # -- reading a task ------------------------------------------------------------------------------------------
    async def _own(self, run_id: str, context: ServerCallContext) -> RunState:
        """The caller's run of that id; TaskNotFoundError for any other id (another caller's, or no A2A task)."""
        if not run_id.startswith(run_id_prefix(caller_of(context))):
            raise TaskNotFoundError(f"no task {run_id!r} of yours")
        try:
            return await self._read(run_id)
        except RunNotFound as exc:
            raise TaskNotFoundError(f"no task {run_id!r} of yours") from exc

    async def _read(self, run_id: str) -> RunState:
        """The run as saved; one whose waiting calls were all decided elsewhere is resumed here."""
        state = await self.store.load(run_id)
        idle = state.status == "waiting_for_approval" and not waiting(state) and not self.drivers.driving(run_id)
        if idle and await approvals.decided(self.store, state):
            self.drivers.resume(run_id)
        return state

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task | None:
        return task_of(await self._own(params.id, context))

    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task | None:
        state = await self._own(params.id, context)
        if task_state(state) in TERMINAL:
            raise TaskNotCancelableError(f"task {params.id} has ended ({state.status}); there is nothing to cancel")
        try:
            await self.drivers.cancel(params.id)
        except NotCancelable as exc:
            raise TaskNotCancelableError(str(exc)) from exc
        return task_of(await self.store.load(params.id))

    # -- sending -------------------------------------------------------------------------------------------------
    async def _start_or_continue(self, params: SendMessageRequest, context: ServerCallContext) -> str:
        message = params.message
        if message.task_id:
            state = await self._own(message.task_id, context)
            return await self._continue(state, message, "a2a:" + (caller_of(context) or "anonymous"))
        task = replies.text_of(message)
        if not task:
            raise InvalidParamsError("a new task needs a text part saying what to do")
        config = self.drivers.config
        state = open_run(task, config, run_id=run_id_prefix(caller_of(context)) + new_run_id())
        state.config = config.model_dump(mode="json")  # as `toolwire submit` saves a run: rebuilt from it anywhere
        await self.store.save(state)
        self.drivers.start(state)
        return state.run_id

    async def _continue(self, state: RunState, message: Message, by: str) -> str:
        """A reply on an input-required task: the decision or answer recorded (as `toolwire approve`/`answer`
        record one, `by` the caller), and the run resumed once nothing else waits."""
        run_id, wanted = state.run_id, waiting(state)
        if state.status != "waiting_for_approval" or not wanted:
            raise InvalidParamsError(
                f"task {run_id} is {state.status}, not waiting for input: a message on it continues it only while it "
                "is input-required (send a message with no task id to start a new task)"
            )
        try:
            await decide_and_wake(self.db, self.store, run_id, _decision(run_id, wanted, message, by))
        except (replies.BadReply, ApprovalRefused) as exc:
            raise InvalidParamsError(str(exc)) from exc
        await self._read(run_id)
        return run_id

    async def on_message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Task | Message:
        run_id = await self._start_or_continue(params, context)
        if params.configuration.return_immediately:
            return task_of(await self.store.load(run_id))
        state = await self.store.load(run_id)
        while task_state(state) not in TERMINAL | PAUSED:
            await anyio.sleep(POLL_S)
            state = await self._read(run_id)
        return task_of(state)

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        run_id = await self._start_or_continue(params, context)
        async for event in self._follow(run_id):
            yield event

    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        await self._own(params.id, context)
        async for event in self._follow(params.id):
            yield event

    async def _follow(self, run_id: str) -> AsyncGenerator[Event]:
        """The task, then a status update each time what it says changes, until it ends or waits for input; a
        completed task's answer as an artifact update before its last status."""
        state = await self.store.load(run_id)
        task = task_of(state)
        yield task
        shown = (task.status.state, task.status.message.parts[0].text)
        while task.status.state not in TERMINAL | PAUSED:
            await anyio.sleep(POLL_S)
            task = task_of(await self._read(run_id))
            now = (task.status.state, task.status.message.parts[0].text)
            if now == shown:
                continue
            shown = now
            for artifact in task.artifacts if task.status.state in TERMINAL else []:
                yield TaskArtifactUpdateEvent(task_id=run_id, context_id=run_id, artifact=artifact, last_chunk=True)
            yield TaskStatusUpdateEvent(task_id=run_id, context_id=run_id, status=task.status, metadata=task.metadata)

    # -- what this door does not do ------------------------------------------------------------------------------
    async def on_list_tasks(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        _unsupported("tasks/list")

    async def _no_push_notifications(self, params: object, context: ServerCallContext) -> NoReturn:
        """The SDK's four push-notification handlers (create, get, list, delete), all one refusal."""
        _unsupported("push notifications")

    on_create_task_push_notification_config = _no_push_notifications
    on_get_task_push_notification_config = _no_push_notifications
    on_list_task_push_notification_configs = _no_push_notifications
    on_delete_task_push_notification_config = _no_push_notifications

    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        _unsupported("the extended agent card")


def _decision(run_id: str, wanted: list[PendingCall], message: Message, by: str) -> Decide:
    """What the reply says, as a decision to record (fleet/decide.py records it and wakes a fleet run)."""
    if any(p.waits_for_input for p in wanted):
        given = replies.answer_in(message)
        return lambda store: input_answers.answer(store, run_id, None, given, by=by)
    said = replies.decision_in(message)
    if said.decision == "approve":
        return lambda store: approvals.approve(store, run_id, said.call_id, shown_hash=said.args_hash, by=by)
    reason = said.reason or "rejected through A2A (no reason given)"
    return lambda store: approvals.reject(store, run_id, said.call_id, reason, shown_hash=said.args_hash, by=by)


def _unsupported(what: str) -> NoReturn:
    raise UnsupportedOperationError(f"this toolwire agent does not offer {what}")


__all__: list[Any] = ["RunDoor", "caller_of"]
