"""A code-mode script's run replayed: its script run again in the sandbox, each batch of calls answered from the
recorded results (no tool server), and a call the record leaves waiting for a person waits again. What `toolwire
replay SCRIPT_RUN` does; `replay.py` compares the path with the recorded one as for any run."""

from dataclasses import replace

from toolwire_client import texts
from toolwire_client.run import exits
from toolwire_client.run.script_record import ScriptRecord
from toolwire_client.run.state import RunState, StepRecord, now
from toolwire_client.strategies.code_mode import CodeMode
from toolwire_client.tools.code_mode.sandbox import ScriptTools, drive
from toolwire_client.tools.code_mode.signatures import python_names
from toolwire_shared.messages import ToolCall, ToolResultMessage
from toolwire_shared.results import ToolResult, failed


class RecordedTurns:
    """Implements ScriptTurns from a record: each call answered with its recorded result."""

    def __init__(self, state: RunState, recorded: RunState) -> None:
        self.state = state
        self.results = {r.call_id: r for step in recorded.steps for r in step.results}
        self.waiting = {p.call.id for p in recorded.pending if p.waits}
        self.sent: list[ToolCall] = []

    async def act(self, step: StepRecord) -> None:
        for call in step.tool_calls:
            self.sent.append(call)
            if call.id in self.waiting:
                continue
            found = self.results.get(call.id)
            step.results.append(found if found is not None else _not_recorded(call))
        self.state.messages += [_message(r) for r in step.results]
        step.finished_at = now()
        if any(call.id in self.waiting for call in step.tool_calls):
            raise exits.WaitingForApproval("waiting for approval (as recorded)")

    async def settle(self) -> None:
        return None


def _not_recorded(call: ToolCall) -> ToolResult:
    return failed(call.id, call.name, "tool_failed", texts.not_recorded(call.name, call.id))


def _message(result: ToolResult) -> ToolResultMessage:
    return ToolResultMessage(call_id=result.call_id, name=result.name, content=result.content)


async def replay_script(recorded: RunState) -> tuple[RunState, list[ToolCall]]:
    """The script of `recorded` run again from its start; the replayed run, and the calls it made."""
    assert recorded.script is not None
    fresh = RunState(
        run_id=recorded.run_id,
        agent_name=recorded.agent_name,
        task=recorded.task,
        model=recorded.model,
        messages=[replace(m) for m in recorded.messages[:1]],
        parent_run_id=recorded.parent_run_id,
        parent_call_id=recorded.parent_call_id,
        script=ScriptRecord(code=recorded.script.code),
    )
    called = sorted({call.name for step in recorded.steps for call in step.tool_calls})
    names = python_names(called)
    turns = RecordedTurns(fresh, recorded)
    try:
        await drive(fresh, turns, ScriptTools({names[w]: w for w in called}, {}), CodeMode())
    except exits.RunExit as exit_:
        exits.finish(fresh, exit_)
    return fresh, turns.sent
