"""Every way a run ends, as an exception the loop raises and `finish` turns into status, stop reason and report."""

import json
from collections import Counter
from typing import Literal

from pydantic import BaseModel

from toolwire_client.state import RunState, RunStatus
from toolwire_shared.messages import ToolCall, ToolResultMessage


class Limits(BaseModel):
    """The harness's limits for one run; None switches a limit off."""

    max_steps: int = 12
    max_tokens: int | None = None
    """Token budget (input + output over the run), checked before each model call."""
    output_reserve_tokens: int = 256
    """Output tokens kept back for the next reply when checking the budget, so the run never overspends."""
    max_wall_s: float | None = None
    max_cost_usd: float | None = None
    """Needs the Agent's price_fn."""
    on_repeat: Literal["stop", "warn"] = "stop"
    repeat_limit: int = 3
    """The same tool with the same arguments this many times is a loop."""
    tool_timeout_s: float | None = None
    """Overrides every tool's own timeout when set."""


class RunExit(Exception):
    """Raised inside the loop to end the run; `code` goes to state.stop_reason, `why` opens the report."""

    status: RunStatus = "stopped"
    code = "stopped"

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


class FinalAnswer(RunExit):
    status = "done"
    code = "final_answer"

    def __init__(self, text: str, steps: int):
        super().__init__(f"finished with a final answer after {_steps(steps)}")
        self.text = text


class StepLimit(RunExit):
    code = "step_limit"


class TokenBudget(RunExit):
    code = "token_budget"


class CostBudget(RunExit):
    code = "cost_budget"


class WallClock(RunExit):
    code = "wall_clock"


class RepeatedCall(RunExit):
    code = "repeated_call"


class WaitingForApproval(RunExit):
    status = "waiting_for_approval"
    code = "waiting_for_approval"


class ModelFailed(RunExit):
    status = "failed"
    code = "model_failed"


class HarnessFailed(RunExit):
    status = "failed"
    code = "harness_error"


def _steps(n: int) -> str:
    return f"{n} step" if n == 1 else f"{n} steps"


def call_text(call: ToolCall) -> str:
    return f"{call.name}({json.dumps(call.arguments, sort_keys=True)})"


def repeated_text(call: ToolCall, times: int) -> str:
    return (
        f"ERROR: {call_text(call)} was asked for {times} times with the same arguments and was not run again. "
        "Change your approach: different arguments, another tool, or answer with what you have."
    )


def finish(state: RunState, exit_: RunExit) -> None:
    """Set status, stop reason and the short report: why it stopped and what was finished."""
    state.status = exit_.status
    state.stop_reason = exit_.code
    if isinstance(exit_, FinalAnswer):
        state.final_answer = exit_.text
    state.report = f"{exit_.why}; {work_summary(state)}"


def work_summary(state: RunState) -> str:
    """'called get_order 3 times (1 ok), calculator once (ok); no final answer'."""
    calls: Counter[str] = Counter()
    ok: Counter[str] = Counter()
    for message in state.messages:
        if isinstance(message, ToolResultMessage):
            calls[message.name] += 1
            ok[message.name] += not message.is_error
    parts = [_tool_part(name, n, ok[name]) for name, n in calls.items()]
    done = "called " + ", ".join(parts) if parts else "no tool called"
    pending = [p.call.name for p in state.pending if p.state == "pending_approval"]
    if pending:
        done += f"; {', '.join(pending)} not run yet (waiting for approval)"
    return done + ("" if state.final_answer is not None else "; no final answer")


def _tool_part(name: str, n: int, ok: int) -> str:
    times = "once" if n == 1 else f"{n} times"
    status = ("ok" if ok else "failed") if n == 1 else f"{ok} ok"
    return f"{name} {times} ({status})"
