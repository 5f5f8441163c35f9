"""Sub-agents, the option: `RunConfig.delegate` offers the run a `delegate` tool that hands part of its task to a
second loop with its own message list, tools and a share of the run's budget (the tool itself: delegate.py)."""

from pydantic import BaseModel, Field


class Delegation(BaseModel):
    """How far a run may delegate. The budgets here are ceilings: a sub-agent never gets more than its parent has
    left (see delegate.carve)."""

    max_depth: int = Field(default=1, ge=1)
    """Levels of sub-agents below this run: 1 lets it delegate, but its sub-agents are not offered `delegate`."""
    max_steps: int = Field(default=6, ge=1)
    """Steps one sub-agent may take (model calls), counted in its parent's step limit too."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Tokens one sub-agent may spend; None: what the parent has left."""
    max_cost_usd: float | None = Field(default=None, gt=0)
    max_wall_s: float | None = Field(default=None, gt=0)
    tools: list[str] | None = None
    """Glob patterns of the parent's tools a sub-agent may be given (None: any of them)."""
    summary_chars: int = Field(default=2000, ge=100)
    """The sub-agent's final answer is cut to this many characters: the delegate call's whole result."""

    def deeper(self) -> "Delegation | None":
        """The option a sub-agent runs with: one level less, None at the last level (no `delegate` for it)."""
        return self.model_copy(update={"max_depth": self.max_depth - 1}) if self.max_depth > 1 else None
