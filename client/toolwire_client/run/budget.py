"""The run's token and USD budgets: before each model call, the most output the reply may use (sent with the request
as its output cap, so the run never overspends by asking); after it, a provider that reported more than the budget
ends the run as over budget with the overspend said, never a silent `done`."""

from collections.abc import Callable

from toolwire_client.run import exits
from toolwire_client.run.limits import RunLimits
from toolwire_client.run.state import RunState
from toolwire_shared.usage import Usage

PriceFn = Callable[[Usage], float | None]
PER_MILLION = 1_000_000


def output_cap(
    limits: RunLimits, state: RunState, prompt_tokens: int, price_fn: PriceFn | None, before: str | None = None
) -> int | None:
    """Output tokens the next reply may use (None: no budget); raises when fewer than the reserve are left.
    `before`: what the call is, for the message (default: the run's next step)."""
    caps: list[int] = []
    before = before or f"step {len(state.steps) + 1}"
    if limits.max_tokens is not None:
        spent = state.usage.total_tokens
        left = limits.max_tokens - spent - prompt_tokens
        if left < limits.output_reserve_tokens:
            raise exits.TokenBudget(
                f"stopped by the token budget before {before}: {spent} tokens spent, the next call needs about "
                f"{prompt_tokens + limits.output_reserve_tokens} more, budget {limits.max_tokens}"
            )
        caps.append(left)
    prompt_price = price_fn(Usage(input_tokens=prompt_tokens)) if price_fn and limits.max_cost_usd is not None else None
    per_million = price_fn(Usage(output_tokens=PER_MILLION)) if prompt_price is not None and price_fn else None
    if limits.max_cost_usd is not None and prompt_price is not None and per_million:
        spent_usd = state.cost_usd or 0.0
        left = int((limits.max_cost_usd - spent_usd - prompt_price) / per_million * PER_MILLION)
        if left < limits.output_reserve_tokens:
            need = prompt_price + per_million * limits.output_reserve_tokens / PER_MILLION
            raise exits.CostBudget(
                f"stopped by the cost budget before {before}: {spent_usd:.4f} USD spent, the next call costs about "
                f"{need:.4f}, budget {limits.max_cost_usd:g} USD"
            )
        caps.append(left)
    return min(caps) if caps else None


def check_spent(limits: RunLimits, state: RunState) -> None:
    """After a reply is counted: over budget ends the run here, before any of its calls run."""
    n = len(state.steps)
    if limits.max_tokens is not None and state.usage.total_tokens > limits.max_tokens:
        over = state.usage.total_tokens - limits.max_tokens
        raise exits.TokenBudget(
            f"stopped over the token budget at step {n}: the provider reported {state.usage.total_tokens} tokens "
            f"in all, {over} over the budget of {limits.max_tokens}"
        )
    if limits.max_cost_usd is not None and state.cost_usd is not None and state.cost_usd > limits.max_cost_usd:
        over_usd = state.cost_usd - limits.max_cost_usd
        raise exits.CostBudget(
            f"stopped over the cost budget at step {n}: {state.cost_usd:.4f} USD in all, {over_usd:.4f} over the "
            f"budget of {limits.max_cost_usd:g} USD"
        )
