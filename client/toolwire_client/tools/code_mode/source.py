"""The `run_code` tool: a call runs its script as a child run of the calling run (found again by its id, derived
from the call's, when the call is sent again on resume), and returns what the script returned and printed."""

import hashlib
import time

from toolwire_client import texts
from toolwire_client.run.script_record import ScriptRecord
from toolwire_client.run.state import RunState
from toolwire_client.strategies.code_mode import CodeMode
from toolwire_client.tools.child_records import ChildRecords
from toolwire_client.tools.code_mode.sandbox import ScriptTools, drive
from toolwire_client.tools.source import ToolRequest, ToolSource
from toolwire_shared import errors
from toolwire_shared.messages import UserMessage
from toolwire_shared.results import SubRun, ToolResult, failed
from toolwire_shared.tools import ToolPolicy, ToolSpec, closed_object

TOOL = "run_code"
SCHEMA = closed_object(
    {"code": {"type": "string", "description": "Python source; `await` the tools at the top level."}}, ["code"]
)


def script_run_id(parent_run_id: str, call_id: str) -> str:
    """The same for every send of one run_code call: a resumed or re-sent call finds the script it started."""
    return f"{parent_run_id}.code-{hashlib.sha256(call_id.encode()).hexdigest()[:12]}"


def spec_of(description: str) -> ToolSpec:
    # idempotent: sent again (a crash, a decision), the call finds its script by id and resumes it, never runs it twice
    return ToolSpec(
        name=TOOL, description=description, input_schema=SCHEMA, policy=ToolPolicy(idempotent=True), source=TOOL
    )


class CodeModeSource(ToolSource):
    """A ToolSource of one tool, `run_code`, whose scripts call the tools the code-mode layer gives it."""

    name = TOOL
    times_out_itself = True  # a script ends on its own limits; each of its calls has its tool's timeout

    def __init__(self, options: CodeMode) -> None:
        self.options = options
        self.tools = ScriptTools({}, {})
        self._scripts = ChildRecords()

    async def list_tools(self) -> list[ToolSpec]:
        return []  # offered by the layer, which knows the tools it describes (layer.py)

    async def call(self, request: ToolRequest) -> ToolResult:
        started = time.perf_counter()
        call, run = request.call, request.run
        code = call.arguments.get("code")
        if not isinstance(code, str) or not code.strip() or set(call.arguments) != {"code"}:
            problems = ["code: a non-empty string of Python source is required"]
            problems += [f"{key}: not an argument of {TOOL}" for key in call.arguments if key != "code"]
            return failed(
                call.id, call.name, "bad_arguments", errors.bad_arguments(TOOL, problems, SCHEMA), since=started
            )
        children, parent = run.children, run.state
        if children is None or parent is None:
            return failed(call.id, call.name, "refused", errors.refused(call.name, None), since=started)
        script = await self._scripts.find(children, script_run_id(parent.run_id, call.id))
        if script is None:
            script = _new_script(parent, call.id, code)
        if script.status in ("running", "waiting_for_approval"):
            script.status = "running"
            async with children.script_calls(script) as turns:
                await drive(script, turns, self.tools, self.options)
        self._scripts.keep(children, script)
        return _answer(call.id, call.name, script, started)


def _new_script(parent: RunState, call_id: str, code: str) -> RunState:
    return RunState(
        run_id=script_run_id(parent.run_id, call_id),
        agent_name=f"{parent.agent_name}.code",
        task=texts.script_task(code),
        model="",
        messages=[UserMessage(content=code)],
        parent_run_id=parent.run_id,
        parent_call_id=call_id,
        script=ScriptRecord(code=code),
    )


def _answer(call_id: str, name: str, script: RunState, started: float) -> ToolResult:
    """run_code's result: the script's output; why it stopped; or that it waits for a person (`sub_run`: the loop
    makes the call wait on the script's run, whose pending call a person decides)."""
    sub = SubRun(run_id=script.run_id, status=script.status)
    took = time.perf_counter() - started
    if script.status == "waiting_for_approval":
        text = texts.script_waiting(script.run_id, [p.call.name for p in script.pending if p.waits])
        return ToolResult(call_id=call_id, name=name, content=text, sub_run=sub, duration_s=took)
    if script.status == "done" and script.final_answer is not None:
        return ToolResult(call_id=call_id, name=name, content=script.final_answer, sub_run=sub, duration_s=took)
    text = (script.report or script.stop_reason or script.status).removesuffix("; no final answer")
    return ToolResult(
        call_id=call_id, name=name, content=text, is_error=True, error_kind="tool_failed", sub_run=sub, duration_s=took
    )
