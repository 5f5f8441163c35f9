"""The `delegate` tool: a call runs a sub-agent, a second Agent loop with its own message list, on a subset of the
calling run's tools and a share of its remaining budget, saved as a child run linked to the parent (run id + call
id). The parent gets only the child's final answer, cut short, as the call's result; the child's usage and steps
count in the parent's totals. A child that waits for a person makes the delegate call wait too (the parent loop
pauses); sending the call again (resume) resumes the same child, found by its id, derived from the parent's."""

import fnmatch
import hashlib
import math
import time
from typing import Any

import anyio

from toolwire_client import texts
from toolwire_client.config import RunConfig, RunLimits
from toolwire_client.models.tokens import estimate_prompt
from toolwire_client.run.state import RunState
from toolwire_client.strategies.delegation import Delegation
from toolwire_client.tools.child_records import ChildRecords
from toolwire_client.tools.source import ChildRuns, ToolRequest, ToolSource
from toolwire_shared import errors
from toolwire_shared.results import SubRun, ToolResult, failed
from toolwire_shared.tools import ToolPolicy, ToolSpec, closed_object

TOOL = texts.DELEGATE_TOOL
WALL_MARGIN_S = 1.0
"""Wall-clock time kept back from a sub-agent (at most a tenth of what is left), so it stops and saves its record
before the parent's own deadline cancels it."""

SCHEMA = closed_object(
    {
        "task": {"type": "string", "description": texts.DELEGATE_TASK_HELP},
        "tools": {"type": "array", "items": {"type": "string"}, "description": texts.DELEGATE_TOOLS_HELP},
    },
    ["task"],
)
SPEC = ToolSpec(
    name=TOOL,
    description=texts.DELEGATE_DESCRIPTION,
    input_schema=SCHEMA,
    policy=ToolPolicy(idempotent=True),  # sent again, a call finds its child by id and never starts a second one
    source=TOOL,
)


def child_run_id(parent_run_id: str, call_id: str) -> str:
    """The same for every send of one delegate call: a resumed or re-sent call finds the child it started."""
    return f"{parent_run_id}.{hashlib.sha256(call_id.encode()).hexdigest()[:12]}"


def carve(
    parent: RunLimits,
    state: RunState,
    options: Delegation,
    *,
    held: list[RunLimits],
    next_prompt: int,
    left_s: float,
) -> RunLimits | str:
    """A sub-agent's limits: each the smaller of the option's ceiling and what the parent has left, or a text
    saying what is too short. What is left is the parent's limit minus what it has spent (its sub-agents' spending
    included), minus the whole limits of its sub-agents still running (`held`), minus what the parent needs to go
    on after the answer comes back: one step, and its next prompt (`next_prompt`, estimated) with its output
    reserve. The wall clock is what is left of every deadline around the call (`left_s`), less a margin so the
    child saves before the parent's deadline. So the parent and all its sub-agents together stay in its limits."""
    steps = min(options.max_steps, parent.max_steps - state.steps_taken - 1 - sum(h.max_steps for h in held))
    if steps < 1:
        return f"{parent.max_steps - state.steps_taken} of {parent.max_steps} steps left"
    tokens = options.max_tokens
    if parent.max_tokens is not None:
        held_tokens = sum(h.max_tokens or 0 for h in held)
        left = parent.max_tokens - state.usage.total_tokens - held_tokens - next_prompt - parent.output_reserve_tokens
        tokens = left if tokens is None else min(tokens, left)
        if tokens <= 2 * parent.output_reserve_tokens:
            return f"{max(left, 0)} tokens left after your next call"
    cost = options.max_cost_usd
    if parent.max_cost_usd is not None:
        left_usd = parent.max_cost_usd - (state.cost_usd or 0.0) - sum(h.max_cost_usd or 0.0 for h in held)
        cost = left_usd if cost is None else min(cost, left_usd)
        if cost <= 0:
            return f"{max(left_usd, 0.0):.4f} USD left"
    wall = options.max_wall_s
    if math.isfinite(left_s):
        usable = left_s - min(WALL_MARGIN_S, left_s / 10)
        wall = usable if wall is None else min(wall, usable)
        if wall <= 0:
            return f"{left_s:.1f} s of wall clock left"
    return parent.model_copy(
        update={"max_steps": steps, "max_tokens": tokens, "max_cost_usd": cost, "max_wall_s": wall}
    )


class DelegateSource(ToolSource):
    """A ToolSource: the one tool `delegate`, a sub-agent of the run the request hands over."""

    name = TOOL
    times_out_itself = True  # a sub-agent ends on its own wall-clock limit, carved from the parent's

    def __init__(self) -> None:
        self._running: dict[str, dict[str, RunLimits]] = {}  # parent run id -> call id -> limits of a running child
        self._children = ChildRecords()

    async def list_tools(self) -> list[ToolSpec]:
        return [SPEC]

    async def call(self, request: ToolRequest) -> ToolResult:
        started = time.perf_counter()
        call_id, name, arguments = request.call.id, request.call.name, request.call.arguments
        parent, state = request.run.children, request.run.state
        if parent is None or state is None or parent.config.delegate is None:
            return failed(call_id, name, "refused", errors.refused(name, None), since=started)
        options = parent.config.delegate
        recorded = await self._children.find(parent, child_run_id(state.run_id, call_id))
        if recorded is not None and recorded.status not in ("running", "waiting_for_approval"):
            return _answer(call_id, recorded, options)  # it ended before: its answer, nothing runs again
        if recorded is not None:
            config = RunConfig.model_validate(recorded.config)
            config = config.model_copy(update={"limits": _wall_now(config.limits, options)})
        else:
            made = self._child_config(parent, state, call_id, arguments, options)
            if isinstance(made, ToolResult):
                return made
            config = made
        tools = _child_tools(config)
        running = self._running.setdefault(state.run_id, {})
        running[call_id] = config.limits
        try:
            if recorded is not None:
                ended = await parent.resume(config, tools, recorded)
            else:
                ended = await parent.start(
                    config, tools, str(arguments["task"]), child_run_id(state.run_id, call_id), (state.run_id, call_id)
                )
        finally:
            running.pop(call_id, None)
        self._children.keep(parent, ended)
        return _answer(call_id, ended, options)

    def _child_config(
        self, parent: ChildRuns, state: RunState, call_id: str, arguments: dict[str, Any], options: Delegation
    ) -> RunConfig | ToolResult:
        task, asked = arguments.get("task"), arguments.get("tools")
        problems = []
        if not isinstance(task, str) or not task.strip():
            problems.append("task: a non-empty string is required")
        if asked is not None and not (isinstance(asked, list) and all(isinstance(t, str) for t in asked)):
            problems.append("tools: a list of tool names is expected")
        problems += [f"{key}: not an argument of delegate" for key in arguments if key not in SCHEMA["properties"]]
        if problems:
            return failed(call_id, TOOL, "bad_arguments", errors.bad_arguments(TOOL, problems, SCHEMA))
        deeper = options.deeper()
        available = [
            s.name
            for s in parent.specs
            if (s.name != TOOL or deeper is not None)
            and (options.tools is None or s.name == TOOL or any(fnmatch.fnmatchcase(s.name, p) for p in options.tools))
        ]
        tools = list(asked) if asked is not None else available
        unknown = [t for t in tools if t not in available]
        if unknown:
            return failed(call_id, TOOL, "bad_arguments", texts.delegate_unknown_tools(unknown, available))
        held = list(self._running.get(state.run_id, {}).values())
        next_prompt = estimate_prompt(state.messages, parent.specs) + options.summary_chars // 4
        left_s = anyio.current_effective_deadline() - anyio.current_time()
        limits = carve(parent.config.limits, state, options, held=held, next_prompt=next_prompt, left_s=left_s)
        if isinstance(limits, str):
            return failed(call_id, TOOL, "blocked", texts.delegate_no_budget(limits))
        return parent.config.model_copy(
            update={
                "name": f"{parent.config.name}.sub",
                "system": texts.DELEGATE_SYSTEM,
                "limits": limits,
                "allow": [t for t in tools if t != TOOL],
                "delegate": deeper if TOOL in tools else None,
                "review": None,
                "tools": [],
                "eval_task": None,
            }
        )


def _wall_now(limits: RunLimits, options: Delegation) -> RunLimits:
    """A resumed child keeps its carved budgets (they count over the whole run); its wall clock, which counts per
    drive like its parent's, is carved again from what is left now."""
    left_s = anyio.current_effective_deadline() - anyio.current_time()
    if not math.isfinite(left_s):
        return limits.model_copy(update={"max_wall_s": options.max_wall_s})
    usable = left_s - min(WALL_MARGIN_S, left_s / 10)
    return limits.model_copy(
        update={"max_wall_s": usable if options.max_wall_s is None else min(usable, options.max_wall_s)}
    )


def _child_tools(config: RunConfig) -> list[str]:
    """The parent's tools a sub-agent is offered: those its config allows, and delegate while it may go deeper."""
    return [*(config.allow or []), *([TOOL] if config.delegate is not None else [])]


def _answer(call_id: str, child: RunState, options: Delegation) -> ToolResult:
    """The delegate call's result: the child's answer cut short (or why it has none), and the child as far as it got
    (`sub_run`: the loop counts it in the parent's totals)."""
    sub = SubRun(
        run_id=child.run_id,
        status=child.status,
        steps=child.steps_taken,
        usage=child.usage,
        cost_usd=child.cost_usd,
    )
    if child.status == "waiting_for_approval":
        text, is_error = texts.delegate_waiting(child.run_id), False
    elif child.final_answer is not None:
        text, is_error = texts.delegate_answer(child.final_answer, options.summary_chars), False
    else:
        last = child.steps[-1].model_text if child.steps else ""
        text = texts.delegate_no_answer(child.run_id, child.report or child.status, last, options.summary_chars)
        is_error = True
    return ToolResult(
        call_id=call_id,
        name=TOOL,
        content=text,
        is_error=is_error,
        error_kind="tool_failed" if is_error else None,
        sub_run=sub,
    )
