"""The AG-UI events a saved run's records make, each event made from exactly one record so a replay makes the same
ones: a step's text is one text message, each of its tool calls one tool call (start, args, end), each result one
tool call result. A `Part` is one record's events with the key that names it; a stream sends each key once."""

import json
from collections.abc import Iterator
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
class Part:
    key: str
    """What record the events are of: `text:STEP`, `call:CALL_ID`, `result:CALL_ID` (unique within a run)."""
    step: int
    events: tuple[BaseEvent, ...]


def step_name(step: StepRecord) -> str:
    """A step's name in STEP_STARTED/STEP_FINISHED: `step N`, with its kind when it is a plan or a review."""
    return f"step {step.index}" if step.kind == "act" else f"step {step.index} ({step.kind})"


def message_id(run_id: str, step: StepRecord) -> str:
    """The id of the assistant message of a step (its text, and the parent of its tool calls)."""
    return f"{run_id}.step{step.index}"


def parts(state: RunState) -> Iterator[Part]:
    """Every record's events, in the order of the run's steps: text, then calls, then results."""
    for step in state.steps:
        parent = message_id(state.run_id, step)
        if step.model_text:
            text = (
                TextMessageStartEvent(message_id=parent, role="assistant"),
                TextMessageContentEvent(message_id=parent, delta=step.model_text),
                TextMessageEndEvent(message_id=parent),
            )
            yield Part(f"text:{step.index}", step.index, text)
        for call in step.tool_calls:
            called = (
                ToolCallStartEvent(tool_call_id=call.id, tool_call_name=call.name, parent_message_id=parent),
                ToolCallArgsEvent(tool_call_id=call.id, delta=json.dumps(call.arguments, sort_keys=True)),
                ToolCallEndEvent(tool_call_id=call.id),
            )
            yield Part(f"call:{call.id}", step.index, called)
        for result in step.results:
            answered = ToolCallResultEvent(
                message_id=f"{state.run_id}.result.{result.call_id}",
                tool_call_id=result.call_id,
                content=result.content,
                role="tool",
            )
            yield Part(f"result:{result.call_id}", step.index, (answered,))


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


def interrupt(run_id: str, pending: PendingCall, *, own: bool = True) -> Interrupt:
    """A call that waits for a person, as an AG-UI interrupt: an approval (answered {"approved": true} or
    {"approved": false, "reason": ...}) or a tool's question (answered with the values its schema asks for).
    A sub-agent's call (`own` False) names no tool call: the stream carries only the top run's."""
    call = pending.call
    tool_call_id = call.id if own else None
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
        )
    return Interrupt(
        id=interrupt_id(run_id, call.id),
        reason="approval",
        message=f"approve {call.name} {json.dumps(call.arguments, sort_keys=True)}?",
        tool_call_id=tool_call_id,
        response_schema=APPROVAL_SCHEMA,
        metadata=metadata,
    )
