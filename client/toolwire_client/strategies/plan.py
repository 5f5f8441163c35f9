"""Plan-and-execute: the run's first call asks for a numbered plan; its steps then run one by one through the same
loop (each one a user turn "Step i of n: ..." and the ordinary tool loop until the model answers that step in
text). A step the model reports as failed (its answer starts with STEP FAILED) gets a new plan for what is left, at
most `max_replans` times; a failed step with no replan left stops the run.

A Workflow (workflow.py) runs on the same machinery with its steps written in code instead of planned. The plan
request, the plan and each step are ordinary exchanges in the message list, so a planned run is saved, replayed
and traced like any other; the plan being run is kept on RunState.plan."""

import re

from pydantic import BaseModel, ConfigDict, Field

from toolwire_client import texts
from toolwire_client.run.plan_state import Plan, PlanStep
from toolwire_shared.messages import ToolCall
from toolwire_shared.results import ToolResult, failed

__all__ = ["Plan", "PlanError", "PlanStep", "Planning", "off_step_calls", "parse_plan", "step_failure"]

_NUMBERED = re.compile(r"(\d+)[.)]\s+(\S.*)")
_FAILED = re.compile(rf"\s*\**{texts.STEP_FAILED}\**\s*:?\s*(.*)", re.DOTALL | re.IGNORECASE)


class Planning(BaseModel):
    """RunConfig.plan: plan first, then run the plan's steps one by one."""

    model_config = ConfigDict(extra="forbid")

    max_replans: int = Field(default=1, ge=0)
    """New plans allowed after a step fails; a failed step with none left stops the run (`plan_failed`)."""
    max_plan_steps: int = Field(default=8, ge=1, le=50)
    """The most steps a plan may have (a longer one is re-asked like one that does not parse)."""


class PlanError(ValueError):
    """A plan reply that does not parse; the message says what was wrong (the model reads it in the re-ask)."""


def parse_plan(text: str, max_steps: int | None = None) -> list[str]:
    """Numbered lines '1. ...', '2. ...' and nothing else: strict, so a plan is never guessed from prose."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        raise PlanError(texts.PLAN_EMPTY)
    steps = []
    for n, line in enumerate(lines, 1):
        found = _NUMBERED.fullmatch(line)
        if found is None:
            raise PlanError(texts.plan_unnumbered(n, line))
        if int(found[1]) != n:
            raise PlanError(texts.plan_misnumbered(n, found[1]))
        steps.append(found[2].strip())
    if max_steps is not None and len(steps) > max_steps:
        raise PlanError(texts.plan_too_long(len(steps), max_steps))
    return steps


def planned(steps: list[str], before: Plan | None) -> Plan:
    """The plan the model wrote, counted as a replan when it replaces `before`."""
    return Plan(steps=[PlanStep(text=text) for text in steps], replans=0 if before is None else before.replans + 1)


def read_plan(text: str, max_steps: int) -> list[str] | PlanError:
    """parse_plan's steps, or what was wrong with them (for a re-ask, without unwinding the exchange)."""
    try:
        return parse_plan(text, max_steps)
    except PlanError as exc:
        return exc


def step_failure(answer: str) -> str | None:
    """The reason when a step's answer reports failure in the agreed form (it starts with STEP FAILED), else None."""
    found = _FAILED.match(answer)
    if found is None:
        return None
    return found[1].strip() or "no reason given"


def off_step_calls(plan: Plan | None, calls: list[ToolCall]) -> list[ToolResult]:
    """Answers (not run) for the calls to tools the running workflow step does not allow."""
    if plan is None or plan.finished or plan.running.tools is None:
        return []
    step = plan.running
    allowed = step.tools or []
    return [
        failed(c.id, c.name, "blocked", texts.not_in_step(c.name, step.name or str(plan.current), allowed))
        for c in calls
        if c.name not in allowed
    ]


def replan_request(plan: Plan, planning: Planning | None, why: str) -> str:
    """The request for a new plan after the running step failed for `why`; PlanError (what stops the run) when
    there is no replan: a workflow's path is the code's, and a plan has only `max_replans`."""
    i, n = plan.current, len(plan.steps)
    if planning is None or plan.workflow or plan.replans >= planning.max_replans:
        spent = "a workflow is not replanned" if planning is None or plan.workflow else "no replan left"
        raise PlanError(f"step {i} of {n} ({plan.running.text}) failed ({why}) and {spent}")
    return texts.replan_request(i, n, plan.running.text, why, planning.max_plan_steps)
