"""Save, load, list, stale versions, migrations and claims against both real back ends."""

import anyio
import pytest

from toolwire_client.run.state import PendingCall, RunState, StepRecord, args_hash
from toolwire_client.store import RunAlreadyClaimed, RunNotFound, SqlRunStore, StaleRunState, open_store
from toolwire_client.store.schema import LATEST
from toolwire_shared.messages import AssistantMessage, ToolCall, UserMessage
from toolwire_shared.usage import Usage


def a_run(run_id: str = "run_1") -> RunState:
    call = ToolCall(id="c1", name="issue_refund", arguments={"order_id": "A123", "amount": 10})
    return RunState(
        run_id=run_id,
        agent_name="support",
        task="refund A123",
        model="scripted:recovers",
        messages=[UserMessage(content="refund A123"), AssistantMessage(tool_calls=[call])],
        steps=[StepRecord(index=1, tool_calls=[call], usage=Usage(input_tokens=100, output_tokens=20))],
        usage=Usage(input_tokens=100, output_tokens=20),
        pending=[PendingCall(call=call, state="pending_approval", args_hash=args_hash(call.arguments))],
        status="waiting_for_approval",
        config={"model": "scripted:recovers"},
    )


async def test_save_load_list_round_trip(store: SqlRunStore) -> None:
    state = a_run()
    await store.save(state)
    assert state.version == 1
    loaded = await store.load("run_1")
    assert loaded.model_dump() == state.model_dump()
    runs = await store.list_runs()
    assert [(r.run_id, r.status, r.steps, r.tokens, r.task) for r in runs] == [
        ("run_1", "waiting_for_approval", 1, 120, "refund A123")
    ]
    loaded.status = "done"
    await store.save(loaded)
    assert (await store.load("run_1")).status == "done"
    assert (await store.list_runs(status="waiting_for_approval")) == []


async def test_stale_version_is_refused(store: SqlRunStore) -> None:
    await store.save(a_run())
    first, second = await store.load("run_1"), await store.load("run_1")
    first.status = "done"
    await store.save(first)
    second.status = "failed"
    with pytest.raises(StaleRunState):
        await store.save(second)
    assert (await store.load("run_1")).status == "done"
    with pytest.raises(StaleRunState):
        await store.save(a_run())  # a fresh state (version 0) for an id that exists


async def test_unknown_run_says_so(store: SqlRunStore) -> None:
    with pytest.raises(RunNotFound, match="toolwire runs"):
        await store.load("run_missing")


async def test_migrations_apply_once_and_reopen(db: str) -> None:
    first = await open_store(db)
    assert await first.schema_version() == LATEST
    await first.save(a_run())
    await first.aclose()
    again = await open_store(db)  # re-applying must be a no-op that keeps the data
    assert await again.schema_version() == LATEST
    assert (await again.load("run_1")).task == "refund A123"
    await again.aclose()


async def test_claim_is_exclusive_under_concurrency(store: SqlRunStore, db: str) -> None:
    await store.save(a_run())
    others = [await open_store(db) for _ in range(4)]
    outcomes: list[str] = []

    async def try_claim(s: SqlRunStore, owner: str) -> None:
        try:
            await s.claim("run_1", owner)
            outcomes.append(owner)
        except RunAlreadyClaimed:
            outcomes.append("refused")

    async with anyio.create_task_group() as tg:
        for n, other in enumerate(others):
            tg.start_soon(try_claim, other, f"host:1:{n}")
    assert sorted(outcomes).count("refused") == 3
    winner = next(o for o in outcomes if o != "refused")
    await store.release("run_1", "someone-else")  # not the holder: no effect
    with pytest.raises(RunAlreadyClaimed):
        await store.claim("run_1", "another")
    await store.release("run_1", winner)
    await store.claim("run_1", "another")
    for other in others:
        await other.aclose()


async def test_claim_of_a_dead_process_is_taken_over(store: SqlRunStore) -> None:
    """At once when the holder is an exited process of this pid space (its owner names the pid space)."""
    import sys

    from toolwire_client.store.claims import claim_owner

    await store.save(a_run())
    dead = await anyio.run_process([sys.executable, "-c", "import os; print(os.getpid())"])
    await store.claim("run_1", claim_owner(int(dead.stdout.decode().strip())))
    await store.claim("run_1", "me")  # the holder's process is gone: the claim is orphaned
    with pytest.raises(RunAlreadyClaimed):
        await store.claim("run_1", "third")
