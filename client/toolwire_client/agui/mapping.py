"""The AG-UI events a saved run's records make, each event made from exactly one record so a replay makes the same
ones: a step's text is one text message, each of its tool calls one tool call (start, args, end), each result one
tool call result. A `Part` is one record's events with the key that names it; a stream sends each key once. A child
run's records (subagents.py) make the same events, attributed to it as an AG-UI subagent (`Sub`)."""

import json
from dataclasses import dataclass
from typing import Any

from ag_ui.core import (
    BaseEvent,
    Interrupt,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from toolwire_client.run.state import PendingCall, RunState, StepRecord


@dataclass(frozen=True)
class Sub:
    """A child run in its parent's stream: the AG-UI subagent invocation it is (`subagentRunId` = its run id), and
    the call, message and sub-agent (None: the thread's own run) that started it."""

    run_id: str
    name: str
    task: str
    tool_call_id: str
    """The starting call as the stream names it (`call_id_of`)."""
    message_id: str
    parent: "Sub | None"


@dataclass(frozen=True)
class Part:
    key: str
    """What record the events are of: `text:RUN:STEP`, `call:RUN:CALL_ID`, `result:RUN:CALL_ID`, and a child run's
    `start:RUN` and `end:RUN` (subagents.py): unique within a thread."""
    step: str | None
    """The name of the step whose STEP_STARTED/STEP_FINISHED frame the events; None: a child's start or end."""
    events: tuple[BaseEvent, ...]
    sub: Sub | None = None
    """The child run the record is of; None: the thread's own run."""
    ends: bool = False
    """The child's end: its SUBAGENT_FINISHED or SUBAGENT_ERROR."""


def step_name(step: StepRecord) -> str:
    """A step's name in STEP_STARTED/STEP_FINISHED: `step N`, with its kind when it is a plan or a review."""
    return f"step {step.index}" if step.kind == "act" else f"step {step.index} ({step.kind})"


def message_id(run_id: str, step: StepRecord) -> str:
    """The id of the assistant message of a step (its text, and the parent of its tool calls)."""
    return f"{run_id}.step{step.index}"


def call_id_of(sub: Sub | None, call_id: str) -> str:
    """A tool call's id in the stream: the call's own for the thread's run; a child's `RUN/CALL` (its interrupt's
    id too), since a child's model may well number its calls as the parent's did."""
    return call_id if sub is None else interrupt_id(sub.run_id, call_id)


def step_parts(state: RunState, step: StepRecord, sub: Sub | None = None) -> tuple[list[Part], list[Part]]:
    """A step's records as parts: its text and calls, then (apart: a child a call started goes between) its
    results."""
    parent, name, run = message_id(state.run_id, step), step_name(step), state.run_id
    by = {"subagent_run_id": sub.run_id} if sub is not None else {}
    said: list[Part] = []
    if step.model_text:
        text = (
            TextMessageStartEvent(message_id=parent, role="assistant", **by),
            TextMessageContentEvent(message_id=parent, delta=step.model_text, **by),
            TextMessageEndEvent(message_id=parent, **by),
        )
        said.append(Part(f"text:{run}:{step.index}", name, text, sub))
    for call in step.tool_calls:
        streamed = call_id_of(sub, call.id)
        called = (
            ToolCallStartEvent(tool_call_id=streamed, tool_call_name=call.name, parent_message_id=parent, **by),
            ToolCallArgsEvent(tool_call_id=streamed, delta=json.dumps(call.arguments, sort_keys=True), **by),
            ToolCallEndEvent(tool_call_id=streamed, **by),
        )
        said.append(Part(f"call:{run}:{call.id}", name, called, sub))
    answered = [
        Part(
            f"result:{run}:{result.call_id}",
            name,
            (
                ToolCallResultEvent(
                    message_id=f"{run}.result.{result.call_id}",
                    tool_call_id=call_id_of(sub, result.call_id),
                    content=result.content,
                    role="tool",
                    **by,
                ),
            ),
            sub,
        )
        for result in step.results
    ]
    return said, answered


def summary(state: RunState) -> dict[str, Any]:
    """The run as AG-UI state (STATE_SNAPSHOT, then STATE_DELTA): its status and what it spent and waits for."""
    return {
        "runId": state.run_id,
        "agent": state.agent_name,
        "status": state.status,
        "steps": len(state.steps),
        "inputTokens": state.usage.input_tokens,
        "outputTokens": state.usage.output_tokens,
        "costUsd": state.cost_usd,
        "waitingFor": [p.call.id for p in state.pending if p.waits_for_person],
        "stopReason": state.stop_reason,
    }


def delta(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """An RFC 6902 patch from `before` to `after` (same keys, as `summary` makes them): a replace per change."""
    return [
        {"op": "replace", "path": f"/{key}", "value": value} for key, value in after.items() if before[key] != value
    ]


def interrupt_id(run_id: str, call_id: str) -> str:
    """The id a resume entry answers: the run (a sub-agent's, when its call waits) and the call, `RUN/CALL`."""
    return f"{run_id}/{call_id}"


APPROVAL_SCHEMA = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean"},
        "reason": {"type": "string", "description": "why not, for the model to read (a rejection needs one)"},
        "argsHash": {"type": "string", "description": "the metadata's argsHash: approve only these arguments"},
    },
    "required": ["approved"],
}


def interrupt(run_id: str, pending: PendingCall, sub: Sub | None = None, *, hidden: bool = False) -> Interrupt:
    """A call that waits for a person, as an AG-UI interrupt: an approval (answered {"approved": true} or
    {"approved": false, "reason": ...}) or a tool's question (answered with the values its schema asks for).
    A child run's call (`sub`) is attributed to its subagent, and names its tool call as the stream does; one of a
    child the stream does not show (`hidden`) names no tool call."""
    call = pending.call
    tool_call_id = None if hidden else call_id_of(sub, call.id)
    by = {"subagent_run_id": sub.run_id} if sub is not None else {}
    metadata: dict[str, Any] = {"tool": call.name, "arguments": call.arguments, "argsHash": pending.args_hash}
    if pending.waits_for_input and pending.input is not None:
        asked = pending.input
        schema = asked.requested_schema if asked.mode == "form" else None
        metadata["url"] = asked.url
        return Interrupt(
            id=interrupt_id(run_id, call.id),
            reason="input",
            message=asked.message,
            tool_call_id=tool_call_id,
            response_schema=schema,
            metadata=metadata,
            **by,
        )
    return Interrupt(
        id=interrupt_id(run_id, call.id),
        reason="approval",
        message=f"approve {call.name} {json.dumps(call.arguments, sort_keys=True)}?",
        tool_call_id=tool_call_id,
        response_schema=APPROVAL_SCHEMA,
        metadata=metadata,
        **by,
    )
