"""A run as an A2A Task: the one mapping from run status to task state (docs/a2a.md's table), the status message
that says what the run waits for, and the answer as the task's artifact. Nothing is stored beside the run: the task
is read from it every time."""

import hashlib
import json
from typing import Any

from a2a.types import Artifact, Message, Part, Role, Task, TaskState, TaskStatus

from toolwire_client.fleet.cancel import CANCELED
from toolwire_client.run.pending import PendingCall
from toolwire_client.run.state import RunState

RUN_PREFIX = "a2a-"


def run_id_prefix(caller: str) -> str:
    """Every run a caller starts here has an id that begins with this: a caller reads and continues only its own
    tasks (another caller's task id is an unknown task), and nothing else in the store is a task of this door."""
    return f"{RUN_PREFIX}{hashlib.sha256(caller.encode()).hexdigest()[:10]}-"


def waiting(state: RunState) -> list[PendingCall]:
    """The calls a person must decide or answer before the run goes on (the task's input-required)."""
    return [p for p in state.pending if p.waits_for_person or p.waits_on_child]


def task_state(state: RunState) -> TaskState:
    """docs/a2a.md: running -> working; waiting for a person -> input-required (decided, about to go on: working);
    done -> completed; stopped by tasks/cancel -> canceled; stopped by a limit, or failed -> failed."""
    if state.status == "running":
        return TaskState.TASK_STATE_WORKING
    if state.status == "waiting_for_approval":
        return TaskState.TASK_STATE_INPUT_REQUIRED if waiting(state) else TaskState.TASK_STATE_WORKING
    if state.status == "done":
        return TaskState.TASK_STATE_COMPLETED
    if state.status == "stopped" and state.stop_reason == CANCELED:
        return TaskState.TASK_STATE_CANCELED
    return TaskState.TASK_STATE_FAILED


TERMINAL = frozenset({TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED})
PAUSED = frozenset({TaskState.TASK_STATE_INPUT_REQUIRED})


def ask_text(p: PendingCall) -> str:
    """What the client is told a waiting call needs, and how to give it on the same task."""
    call = f"{p.call.name}({json.dumps(p.call.arguments, sort_keys=True)}) [call {p.call.id}]"
    if p.waits_for_input and p.input is not None:
        return (
            f"{call} asks: {p.input.message} Reply on this task with a data part "
            '{"action": "accept", "content": {...}} (or the text decline or cancel).'
        )
    if p.waits_on_child:
        return f"{call} waits on its sub-agent run {p.child_run_id}: decide there (`toolwire approvals`)."
    return f"{call} waits for approval. Reply on this task with the text approve, or reject: REASON."


def status_text(state: RunState) -> str:
    if state.status == "done":
        return state.final_answer or ""
    if state.status == "waiting_for_approval" and waiting(state):
        return " ".join(ask_text(p) for p in waiting(state))
    if state.status == "running" or state.status == "waiting_for_approval":
        return f"working: {len(state.steps)} step(s) so far"
    return state.report or state.stop_reason or state.status


def _wanted(p: PendingCall) -> dict[str, Any]:
    one: dict[str, Any] = {"call_id": p.call.id, "tool": p.call.name, "arguments": p.call.arguments}
    if p.waits_for_input and p.input is not None:
        one.update(wants="input", question=p.input.message, schema=p.input.requested_schema or {})
    elif p.waits_on_child:
        one.update(wants="sub_agent", run_id=p.child_run_id)
    else:
        one.update(wants="approval", args_hash=p.args_hash, why=p.approval_reason or "")
    return one


def task_of(state: RunState) -> Task:
    """The run as a Task: id and context id the run id, its state, a status message saying what it waits for (or
    its answer, or why it stopped), the task as the first user message, and the answer as an artifact."""
    run_id = state.run_id
    said = Message(
        message_id=f"{run_id}-status-{state.version}",
        role=Role.ROLE_AGENT,
        task_id=run_id,
        context_id=run_id,
        parts=[Part(text=status_text(state))],
    )
    status = TaskStatus(state=task_state(state), message=said)
    status.timestamp.FromDatetime(state.updated_at)
    task = Task(id=run_id, context_id=run_id, status=status)
    task.history.append(
        Message(
            message_id=f"{run_id}-task",
            role=Role.ROLE_USER,
            task_id=run_id,
            context_id=run_id,
            parts=[Part(text=state.task)],
        )
    )
    if state.status == "done" and state.final_answer is not None:
        task.artifacts.append(
            Artifact(artifact_id=f"{run_id}-answer", name="answer", parts=[Part(text=state.final_answer)])
        )
    task.metadata.update(
        {
            "run_id": run_id,
            "run_status": state.status,
            "stop_reason": state.stop_reason or "",
            "steps": len(state.steps),
            "waiting": [_wanted(p) for p in waiting(state)],
        }
    )
    return task
