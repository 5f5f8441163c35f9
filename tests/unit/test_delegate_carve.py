"""`carve` as a table (client/toolwire_client/tools/delegate.py): a sub-agent's limits are each the smaller of the
option's ceiling and what the parent has left after what it spent, its sub-agents still running (`held`), one step
and its next prompt with the output reserve; the wall clock is what is left less a margin (1 s, or a tenth of what
is left when that is shorter). Too little left: a text saying what. End to end: tests/loop/test_delegate*.py."""

import math

import pytest

from toolwire_client.run.limits import RunLimits
from toolwire_client.run.state import RunState, StepRecord
from toolwire_client.strategies.delegation import Delegation
from toolwire_client.tools.delegate import carve
from toolwire_shared.results import SubRun
from toolwire_shared.usage import Usage

INF = math.inf


def state(steps: int = 0, tokens: int = 0, usd: float | None = None, child_steps: int = 0) -> RunState:
    children = {"c0": SubRun(run_id="child", status="done", steps=child_steps)} if child_steps else {}
    return RunState(
        run_id="r",
        agent_name="a",
        task="t",
        model="m",
        steps=[StepRecord(index=i) for i in range(steps)],
        usage=Usage(input_tokens=tokens),
        cost_usd=usd,
        children=children,
    )


def limits(**kw: object) -> RunLimits:
    return RunLimits.model_validate({"output_reserve_tokens": 100, **kw})


# One row: parent limits, what the parent spent, the option's ceilings, held children, next prompt, wall clock left,
# and the child's limits (max_steps, max_tokens, max_cost_usd, max_wall_s), or the refusal.
@pytest.mark.parametrize(
    ("parent", "spent", "option", "held", "next_prompt", "left_s", "child"),
    [
        # steps: the option's 6, or the parent's 12 less what it took, one step to go on, and held children's
        (limits(max_steps=12), state(), Delegation(), [], 0, INF, (6, None, None, None)),
        (limits(max_steps=12), state(steps=8), Delegation(), [], 0, INF, (3, None, None, None)),
        (limits(max_steps=12), state(steps=4, child_steps=4), Delegation(), [], 0, INF, (3, None, None, None)),
        (limits(max_steps=12), state(), Delegation(), [limits(max_steps=6)], 0, INF, (5, None, None, None)),
        (limits(max_steps=12), state(steps=10), Delegation(), [], 0, INF, (1, None, None, None)),
        # tokens: left = budget - spent - held - next prompt - reserve; the option's ceiling when smaller
        (limits(max_tokens=10_000), state(), Delegation(), [], 1_000, INF, (6, 8_900, None, None)),
        (limits(max_tokens=10_000), state(tokens=4_000), Delegation(), [], 1_000, INF, (6, 4_900, None, None)),
        (
            limits(max_tokens=10_000),
            state(),
            Delegation(),
            [limits(max_steps=1, max_tokens=3_000)],
            1_000,
            INF,
            (6, 5_900, None, None),
        ),
        (limits(max_tokens=10_000), state(), Delegation(max_tokens=2_000), [], 1_000, INF, (6, 2_000, None, None)),
        (limits(), state(), Delegation(max_tokens=2_000), [], 1_000, INF, (6, 2_000, None, None)),  # no parent cap
        (limits(max_tokens=1_201), state(), Delegation(), [], 900, INF, (6, 201, None, None)),  # just over 2 reserves
        # cost: left = budget - spent - held; the option's ceiling when smaller
        (limits(max_cost_usd=1.0), state(usd=0.25), Delegation(), [], 0, INF, (6, None, 0.75, None)),
        (
            limits(max_cost_usd=1.0),
            state(),
            Delegation(),
            [limits(max_steps=1, max_cost_usd=0.5)],
            0,
            INF,
            (6, None, 0.5, None),
        ),
        (limits(max_cost_usd=1.0), state(), Delegation(max_cost_usd=0.1), [], 0, INF, (6, None, 0.1, None)),
        # wall clock: what is left less min(1 s, a tenth of it); the option's ceiling when smaller
        (limits(), state(), Delegation(), [], 0, 60.0, (6, None, None, 59.0)),
        (limits(), state(), Delegation(), [], 0, 5.0, (6, None, None, 4.5)),
        (limits(), state(), Delegation(max_wall_s=30.0), [], 0, 60.0, (6, None, None, 30.0)),
        (limits(), state(), Delegation(max_wall_s=30.0), [], 0, INF, (6, None, None, 30.0)),  # no deadline around it
        # refused: the first limit with too little left is named
        (limits(max_steps=12), state(steps=11), Delegation(), [], 0, INF, "1 of 12 steps left"),
        (limits(max_steps=12), state(steps=6, child_steps=5), Delegation(), [], 0, INF, "1 of 12 steps left"),
        (limits(max_steps=12), state(steps=5), Delegation(), [limits(max_steps=6)], 0, INF, "7 of 12 steps left"),
        (limits(max_tokens=1_200), state(), Delegation(), [], 900, INF, "200 tokens left after your next call"),
        (limits(max_tokens=1_000), state(tokens=2_000), Delegation(), [], 0, INF, "0 tokens left after your next call"),
        (limits(max_cost_usd=1.0), state(usd=1.0), Delegation(), [], 0, INF, "0.0000 USD left"),
        (
            limits(max_cost_usd=1.0),
            state(usd=0.5),
            Delegation(),
            [limits(max_steps=1, max_cost_usd=0.6)],
            0,
            INF,
            "0.0000 USD left",
        ),
        (limits(), state(), Delegation(), [], 0, 0.0, "0.0 s of wall clock left"),
        (limits(), state(), Delegation(), [], 0, -2.0, "-2.0 s of wall clock left"),
        # the first limit too short is the one named: steps before tokens before cost before wall clock
        (limits(max_steps=2, max_tokens=10), state(steps=1), Delegation(), [], 0, 0.0, "1 of 2 steps left"),
    ],
)
def test_carve(
    parent: RunLimits,
    spent: RunState,
    option: Delegation,
    held: list[RunLimits],
    next_prompt: int,
    left_s: float,
    child: tuple[int, int | None, float | None, float | None] | str,
) -> None:
    """`child`: the carved limits (steps, tokens, cost, wall clock), or the refusal when too little is left."""
    carved = carve(parent, spent, option, held=held, next_prompt=next_prompt, left_s=left_s)
    if isinstance(child, str):
        assert carved == child
        return
    assert isinstance(carved, RunLimits), carved
    got = (carved.max_steps, carved.max_tokens, carved.max_cost_usd, carved.max_wall_s)
    assert got == pytest.approx(child)
    # everything else is the parent's
    assert carved.output_reserve_tokens == parent.output_reserve_tokens
    assert carved.on_repeat == parent.on_repeat
