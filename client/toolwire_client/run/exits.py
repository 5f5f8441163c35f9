"""Every way a run ends, as an exception the loop raises and `finish` turns into status, stop reason and report."""

from collections import Counter

from toolwire_client.run.state import RunState, RunStatus
from toolwire_shared.words import counted


class RunExit(Exception):
    """Raised inside the loop to end the run; `code` goes to state.stop_reason, `why` opens the report.

    Each exit is a subclass that names its code (and status, when the run is not just stopped) as class keywords."""

    status: RunStatus = "stopped"
    code = "stopped"

    def __init_subclass__(cls, *, code: str, status: RunStatus = "stopped") -> None:
        super().__init_subclass__()
        cls.code, cls.status = code, status

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


class FinalAnswer(RunExit, code="final_answer", status="done"):
    def __init__(self, text: str, steps: int):
        super().__init__(f"finished with a final answer after {counted(steps, 'step')}")
        self.text = text


class StepLimit(RunExit, code="step_limit"): ...


class TokenBudget(RunExit, code="token_budget"): ...


class CostBudget(RunExit, code="cost_budget"): ...


class WallClock(RunExit, code="wall_clock"): ...


class RepeatedCall(RunExit, code="repeated_call"): ...


class PlanFailed(RunExit, code="plan_failed"):
    """The plan did not parse after one re-ask, or a step failed with no replan left."""


class WaitingForApproval(RunExit, code="waiting_for_approval", status="waiting_for_approval"): ...


class ModelFailed(RunExit, code="model_failed", status="failed"): ...


class Tampered(RunExit, code="tampered", status="failed"):
    """A risky call was about to run with no approval of exactly it on record: the saved state was changed."""


class NoLongerDriving(RunExit, code="lease_lost"):
    """This process lost the run's lease (the store raised LeaseLost, or it went unrenewed): another process may drive
    the run now, so this one stops before its next model or tool call and saves nothing."""


class HarnessFailed(RunExit, code="harness_error", status="failed"):
    """The harness refused to go on (a malformed request it would have sent)."""


class SaveFailed(RunExit, code="save_failed", status="failed"):
    """The run store refused a save (not for its content, which text_codec.py makes storable): the run ends here
    rather than going on unrecorded, or being left `running` by the exception."""


def finish(state: RunState, exit_: RunExit) -> None:
    """Set status, stop reason and the short report: why it stopped and what was finished."""
    state.status = exit_.status
    state.stop_reason = exit_.code
    if isinstance(exit_, FinalAnswer):
        state.final_answer = exit_.text
    state.report = f"{exit_.why}; {work_summary(state)}"


NOT_RUN: frozenset[str] = frozenset({"unknown_tool", "bad_arguments", "refused", "rejected", "blocked"})
"""Error kinds of calls that never reached a tool: the report does not count them as called."""


def work_summary(state: RunState) -> str:
    """'called get_order 3 times (1 ok), calculator once (ok); no final answer', or for calls that were asked for
    but not run: 'asked for get_order 20 times, none run'."""
    asked: Counter[str] = Counter()
    ran: Counter[str] = Counter()
    ok: Counter[str] = Counter()
    for step in state.steps:
        asked.update(call.name for call in step.tool_calls)
        for result in step.results:
            ran[result.name] += result.error_kind not in NOT_RUN
            ok[result.name] += not result.is_error
    parts = [_tool_part(name, n, ran[name], ok[name]) for name, n in asked.items()]
    done = ", ".join(parts) if parts else "no tool called"
    pending = [p.call.name for p in state.pending if p.waits_for_approval_here_or_below]
    if pending:
        done += f"; {', '.join(pending)} not run yet (waiting for approval)"
    return done + ("" if state.final_answer is not None else "; no final answer")


def _tool_part(name: str, asked: int, ran: int, ok: int) -> str:
    times = "once" if asked == 1 else f"{asked} times"
    status = ("ok" if ok else "failed") if ran == 1 else f"{ok} ok"
    if ran == asked:
        return f"called {name} {times} ({status})"
    return f"asked for {name} {times}, " + ("none run" if ran == 0 else f"{ran} run ({status})")
