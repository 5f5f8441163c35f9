"""`SqlRunStore.children`: the runs a run's calls started, by call id, from their parent link, on both back ends
(the AG-UI stream finds a sub-agent's run by it while the delegate call still runs)."""

from toolwire_client.run.state import RunState
from toolwire_client.store import SqlRunStore


def a_run(run_id: str, parent: tuple[str, str] | None = None) -> RunState:
    return RunState(
        run_id=run_id,
        agent_name="support.sub" if parent else "support",
        task="refund A123",
        model="claude-fake",
        parent_run_id=parent[0] if parent else None,
        parent_call_id=parent[1] if parent else None,
    )


async def test_the_children_of_a_run_are_found_by_the_call_that_started_each(store: SqlRunStore) -> None:
    for run in [
        a_run("top"),
        a_run("top.a", ("top", "call_1")),
        a_run("top.b", ("top", "call_2")),
        a_run("top.a.c", ("top.a", "call_1")),
        a_run("other"),
    ]:
        await store.save(run)
    assert await store.children("top") == {"call_1": "top.a", "call_2": "top.b"}
    assert await store.children("top.a") == {"call_1": "top.a.c"}
    assert await store.children("other") == {}
