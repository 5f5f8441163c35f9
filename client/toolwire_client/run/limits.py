"""The harness's limits for one run (steps, tokens, cost, wall clock, repeats, tool timeouts, result size,
sampling requests)."""

from typing import Literal

from pydantic import BaseModel, Field

DEFAULT_MAX_RESULT_CHARS = 20_000
"""The client's cap on a tool result's text: the same as a toolwire server's own default (`ServerLimits`)."""


class RunLimits(BaseModel):
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
    repeat_limit: int = Field(default=3, ge=2)
    """The same tool with the same arguments this many times is a loop (2 or more: a first call is no repeat)."""
    tool_timeout_s: float | None = None
    """Overrides every tool's own timeout when set."""
    max_result_chars: int | None = Field(default=DEFAULT_MAX_RESULT_CHARS, ge=1)
    """Any tool result's text beyond this is cut by the ToolBox, with a note the model can act on (None: no cap)."""
    max_sampling_requests: int = Field(default=5, ge=0)
    """How many times the run's tool servers may borrow its model (MCP sampling, for servers allowed to); later
    requests are refused with an MCP error saying so. Each is also charged to the token and cost budgets."""
