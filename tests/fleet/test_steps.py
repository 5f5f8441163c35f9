"""fleet/steps.py inside a real DBOS workflow (SQLite system database, in this process): a save the run store
committed before DBOS recorded its step (a worker killed in between) is recognised as that same save when the
recovered leg makes it again; a save of different content is still refused."""

import uuid
from pathlib import Path

import pytest
from dbos import DBOS

from toolwire_client.fleet.app import dbos_config
from toolwire_client.fleet.steps import Leg, StepStore
from toolwire_client.run.state import RunState
from toolwire_client.store import StaleRunState, open_store
from toolwire_shared.messages import AssistantMessage, UserMessage

pytestmark = pytest.mark.timeout(60)


@DBOS.workflow(name="test-steps-save-again")
async def save_again(db: str, run_id: str, same: bool) -> str:
    """A replayed save: the store already holds this version + 1 (same content, or not), then the step runs."""
    store = await open_store(db)
    try:
        state = await store.load(run_id)
        state.messages.append(AssistantMessage(text="the answer"))
        ahead = state.model_copy(deep=True)
        if not same:
            ahead.messages[-1] = AssistantMessage(text="someone else's answer")
        await store.save(ahead)  # committed; the process "dies" before DBOS records the step
        try:
            await StepStore(store, Leg()).save(state)
        except StaleRunState:
            return "refused"
        return f"version {state.version}"
    finally:
        await store.aclose()


async def test_a_save_committed_before_its_step_was_recorded_is_that_save(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    store = await open_store(db)
    for run_id in ("run_same", "run_other"):
        await store.save(
            RunState(run_id=run_id, agent_name="a", task="t", model="m", messages=[UserMessage(content="t")])
        )
    await store.aclose()
    DBOS(config=dbos_config(db, f"test-{uuid.uuid4().hex[:6]}"))  # type: ignore[arg-type]
    DBOS.launch()
    try:
        same = await (await DBOS.start_workflow_async(save_again, db, "run_same", True)).get_result()
        other = await (await DBOS.start_workflow_async(save_again, db, "run_other", False)).get_result()
    finally:
        DBOS.destroy()
    assert same == "version 2"  # the store's version, taken as this save's outcome
    assert other == "refused"
