"""Replay: each seed scenario, saved in a real store, replays "identical" through the same loop with no model and
no tools; a deliberate change to the loop's limits is reported at the first step where the path leaves the record."""

import pytest
from seed_tools import seed_source

from toolwire_client.config import RunConfig, RunLimits
from toolwire_client.loop import Agent
from toolwire_client.models.providers import make_scripted
from toolwire_client.replay import replay
from toolwire_client.store import SqlRunStore
from toolwire_client.tools.toolbox import ToolBox

TASK = "What does order A123 cost in total with 18% GST?"
SCENARIOS = {
    "recovers": ("recovers", RunLimits(max_steps=6)),
    "repeats": ("repeats", RunLimits(max_steps=6)),
    "wanders": ("wanders", RunLimits(max_steps=4)),
    "tight budget": ("recovers", RunLimits(max_steps=6, max_tokens=700)),
}


async def record(store: SqlRunStore, script: str, limits: RunLimits) -> str:
    config = RunConfig(model=f"scripted:{script}", name="seed", limits=limits)
    state = await Agent(make_scripted(script), ToolBox([seed_source()]), config=config, store=store).run(TASK)
    return state.run_id


@pytest.mark.parametrize("scenario", list(SCENARIOS))
async def test_each_seed_scenario_replays_identical(store: SqlRunStore, scenario: str) -> None:
    script, limits = SCENARIOS[scenario]
    run_id = await record(store, script, limits)
    recorded = await store.load(run_id)
    assert recorded.stop_reason is not None and recorded.steps
    outcome = await replay(recorded)
    assert outcome.identical, outcome.describe()
    assert outcome.describe().startswith("identical")
    sent_in_record = [r.call_id for s in recorded.steps for r in s.results if r.error_kind != "blocked"]
    assert [c.id for c in outcome.sent] == sent_in_record
    assert (outcome.replayed.status, outcome.replayed.stop_reason) == (recorded.status, recorded.stop_reason)


async def test_changed_repeat_limit_is_reported_at_the_first_difference(store: SqlRunStore) -> None:
    run_id = await record(store, "repeats", RunLimits(max_steps=6))
    recorded = await store.load(run_id)
    assert recorded.stop_reason == "repeated_call" and len(recorded.steps) == 3
    outcome = await replay(recorded, limits=RunLimits(max_steps=6, repeat_limit=2))
    assert not outcome.identical
    assert outcome.difference is not None and outcome.difference.startswith("step 2:"), outcome.difference
    # the replayed run stops at the second identical call: its observation is the "not run" answer, not the tool's
    assert "not run: stopped by a repeated call" in outcome.difference


async def test_looser_budget_goes_past_the_record(store: SqlRunStore) -> None:
    run_id = await record(store, "recovers", RunLimits(max_steps=6, max_tokens=700))
    recorded = await store.load(run_id)
    assert recorded.stop_reason == "token_budget"
    outcome = await replay(recorded, limits=RunLimits(max_steps=6))
    step = len(recorded.steps) + 1
    assert outcome.difference == (
        f"step {step}: expected the run to end (stopped, token_budget), but the replay asked the model for another step"
    )


async def test_changed_step_limit_is_reported(store: SqlRunStore) -> None:
    run_id = await record(store, "recovers", RunLimits(max_steps=6))
    recorded = await store.load(run_id)
    assert recorded.stop_reason == "final_answer"
    outcome = await replay(recorded, limits=RunLimits(max_steps=2))
    assert outcome.difference is not None and outcome.difference.startswith("step 3:"), outcome.difference
    assert "step_limit" in outcome.difference
