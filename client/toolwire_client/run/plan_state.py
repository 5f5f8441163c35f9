"""The plan a run is following, as run data (RunState.plan): its steps, the one running now, and what the finished
ones said. Making and checking plans is the strategy's part (strategies/plan.py, strategies/workflow.py)."""

import re

from pydantic import BaseModel, Field

from toolwire_client import texts


class PlanStep(BaseModel):
    text: str
    """The step as the model planned it, or a workflow step's instruction."""
    name: str | None = None
    """A workflow step's name (its output is `{name}` in later instructions)."""
    tools: list[str] | None = None
    """A workflow step's tools (None: any tool); a call to another one is answered, not run."""


class Plan(BaseModel):
    """The plan being run, saved on RunState.plan: its steps, the one running now, and what the finished ones said."""

    steps: list[PlanStep] = Field(min_length=1)
    current: int = 1
    """The 1-based step running now; len(steps) + 1 once the last one is answered."""
    outputs: list[str] = Field(default_factory=list)
    """The text answer of each finished step, in order."""
    replans: int = 0
    """How many times this run was planned again after a failed step."""
    workflow: bool = False
    """The steps came from a Workflow in code, not from the model (so there is no replan)."""

    @property
    def finished(self) -> bool:
        return self.current > len(self.steps)

    @property
    def running(self) -> PlanStep:
        return self.steps[self.current - 1]

    def position(self) -> tuple[int, int] | None:
        """(i, n) of the step running now, None once the plan is finished."""
        return None if self.finished else (self.current, len(self.steps))

    def step_message(self) -> str:
        """The user turn that starts the running step."""
        step, i, n = self.running, self.current, len(self.steps)
        if not self.workflow:
            return texts.plan_step(i, n, step.text)
        done = {s.name: out for s, out in zip(self.steps, self.outputs, strict=False) if s.name}
        instruction = re.sub(r"\{(\w+)\}", lambda m: done.get(m[1], m[0]), step.text)
        return texts.workflow_step(i, n, step.name or str(i), instruction, step.tools)

    def finish_step(self, answer: str) -> None:
        self.outputs.append(answer)
        self.current += 1
