"""Workflows: a path written in code whose steps the model fills in (classify the ticket, look up the policy, draft
the reply), run by the Agent as one run: one message list, one trace, the same tools, limits and store.

Each step is a model turn with an instruction ("Step i of n (name): ...") and, optionally, the only tools it may
call (a call to another is answered, not run); `{name}` in an instruction is the text answer of that earlier step.
It runs on plan-and-execute's machinery (plan.py) with the plan given instead of asked for, so a workflow is saved
(RunState.plan), replayed and shown like a planned run; a step the model reports failed stops it (no replan: the
path is the code's)."""

import re

from pydantic import Field
from pydantic.dataclasses import dataclass

from toolwire_client.strategies.plan import Plan, PlanStep

_NAME = re.compile(r"[a-z][a-z0-9_]*")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
EXAMPLE = (
    'Workflow([Step("classify", "Classify the ticket.", tools=[]), Step("reply", "Reply to a {classify} ticket.")])'
)


@dataclass
class Step:
    name: str
    """Lower-case identifier; `{name}` in a later instruction is replaced by this step's answer."""
    instruction: str
    tools: list[str] | None = None
    """The tools this step may call; None: any tool of the run, []: none."""


@dataclass
class Workflow:
    steps: list[Step] = Field(min_length=1)

    def __post_init__(self) -> None:
        seen: list[str] = []
        for step in self.steps:
            if not _NAME.fullmatch(step.name):
                raise ValueError(f"step name {step.name!r} must be a lower-case identifier like 'classify'. {EXAMPLE}")
            if step.name in seen:
                raise ValueError(f"two steps are named {step.name!r}; step names must be unique. {EXAMPLE}")
            for name in _PLACEHOLDER.findall(step.instruction):
                if name not in seen:
                    raise ValueError(
                        f"step {step.name!r} uses {{{name}}}, which is not an earlier step "
                        f"(earlier steps: {seen or 'none'}). {EXAMPLE}"
                    )
            seen.append(step.name)

    def plan(self) -> Plan:
        """The steps as the plan a run follows (RunState.plan)."""
        steps = [PlanStep(text=s.instruction, name=s.name, tools=s.tools) for s in self.steps]
        return Plan(steps=steps, workflow=True)
