"""`output_cap` as a table (client/toolwire_client/run/budget.py): the output tokens the next reply may use, the
smaller of what the token budget and the cost budget leave after the prompt, or the run stops when fewer than the
output reserve are left. End to end: tests/faults/test_budget_and_ids.py, tests/loop/test_loop.py."""

import pytest

from toolwire_client.run import exits
from toolwire_client.run.budget import PriceFn, output_cap
from toolwire_client.run.limits import RunLimits
from toolwire_client.run.state import RunState, StepRecord
from toolwire_shared.usage import Usage


def price(input_per_m: float, output_per_m: float) -> PriceFn:
    """USD per million input and output tokens."""
    return lambda u: (u.input_tokens * input_per_m + u.output_tokens * output_per_m) / 1_000_000


def state(spent_tokens: int = 0, spent_usd: float | None = None, steps: int = 0) -> RunState:
    return RunState(
        run_id="r",
        agent_name="a",
        task="t",
        model="m",
        usage=Usage(input_tokens=spent_tokens),
        cost_usd=spent_usd,
        steps=[StepRecord(index=i) for i in range(steps)],
    )


# 1 USD per million tokens in and out: one token costs 1e-6 USD, so a budget in USD reads as tokens.
ONE = price(1.0, 1.0)


@pytest.mark.parametrize(
    ("limits", "spent_tokens", "spent_usd", "prompt", "price_fn", "cap"),
    [
        (RunLimits(), 0, None, 500, None, None),  # no budget: no cap
        (RunLimits(max_cost_usd=1.0), 0, None, 500, None, None),  # a cost budget without prices: no cap
        (RunLimits(max_tokens=10_000), 0, None, 1_000, None, 9_000),
        (RunLimits(max_tokens=10_000), 4_000, None, 1_000, None, 5_000),
        (RunLimits(max_tokens=10_000, output_reserve_tokens=256), 8_744, None, 1_000, None, 256),  # exactly the reserve
        (RunLimits(max_cost_usd=0.01), 0, 0.0, 1_000, ONE, 9_000),
        (RunLimits(max_cost_usd=0.01), 0, 0.004, 1_000, ONE, 5_000),
        (RunLimits(max_cost_usd=0.01), 0, None, 1_000, price(1.0, 4.0), 2_250),  # output 4x dearer: a quarter
        (RunLimits(max_tokens=10_000, max_cost_usd=0.01), 0, 0.0, 1_000, price(1.0, 4.0), 2_250),  # cost is smaller
        (RunLimits(max_tokens=3_000, max_cost_usd=0.01), 0, 0.0, 1_000, ONE, 2_000),  # tokens are smaller
        (RunLimits(max_tokens=10_000), 0, None, 1_000, ONE, 9_000),  # prices, no cost budget: tokens only
        (RunLimits(max_cost_usd=0.01), 0, 0.0, 1_000, price(1.0, 0.0), None),  # free output: no cost cap
    ],
)
def test_output_cap(
    limits: RunLimits,
    spent_tokens: int,
    spent_usd: float | None,
    prompt: int,
    price_fn: PriceFn | None,
    cap: int | None,
) -> None:
    assert output_cap(limits, state(spent_tokens, spent_usd), prompt, price_fn) == cap


@pytest.mark.parametrize(
    ("limits", "spent_tokens", "spent_usd", "prompt", "price_fn", "stop", "says"),
    [
        (RunLimits(max_tokens=10_000), 8_745, None, 1_000, None, exits.TokenBudget, "8745 tokens spent"),
        (RunLimits(max_tokens=10_000), 0, None, 9_900, None, exits.TokenBudget, "needs about 10156 more"),
        (RunLimits(max_tokens=1_000), 2_000, None, 10, None, exits.TokenBudget, "budget 1000"),  # already over
        (RunLimits(max_cost_usd=0.01), 0, 0.0098, 1_000, ONE, exits.CostBudget, "0.0098 USD spent"),
        (RunLimits(max_cost_usd=0.001), 0, 0.0, 1_000, ONE, exits.CostBudget, "costs about 0.0013"),
        # the token budget is checked first
        (RunLimits(max_tokens=1_000, max_cost_usd=0.001), 900, 0.0, 1_000, ONE, exits.TokenBudget, "before step 1"),
    ],
)
def test_output_cap_stops(
    limits: RunLimits,
    spent_tokens: int,
    spent_usd: float | None,
    prompt: int,
    price_fn: PriceFn | None,
    stop: type[Exception],
    says: str,
) -> None:
    with pytest.raises(stop, match=says):
        output_cap(limits, state(spent_tokens, spent_usd), prompt, price_fn)


def test_the_stop_names_the_next_step() -> None:
    with pytest.raises(exits.TokenBudget, match="before step 4"):
        output_cap(RunLimits(max_tokens=100), state(90, steps=3), 5, None)
