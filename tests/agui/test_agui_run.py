"""A toolwire run as AG-UI events, through `toolwire agent serve --ag-ui` in its own process, on the real support
tool server and a loopback Anthropic server: every event validates as an ag-ui-protocol event; parallel tool calls;
the stream ends with an approval interrupt, which the front end's resume answers (recorded as `toolwire approve`
records it, under the person's name); a client that reconnects mid-run gets the run replayed from the store and then
live, with no event lost or doubled; a stranger's token, or none, gets nothing and decides nothing."""

import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from agui_procs import ANSWER, PARALLEL, REFUND, Model, agent_server, people_file, run_input, stream

from helpers.fake_providers import FakeProvider
from toolwire_client.store import open_store

ALICE, BOB = "tok-alice-0123456789", "tok-bob-0123456789"
THREAD = "thread-refund-a123"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, Model]]:
    folder = tmp_path_factory.mktemp("agui")
    tokens = people_file(folder, {"alice": (ALICE, ["support*"]), "bob": (BOB, ["billing*"])})
    model = Model(gated=True)
    with (
        FakeProvider(responder=model) as fake,
        agent_server(folder, fake.anthropic_url, "--tokens", str(tokens)) as url,
    ):
        yield folder, url, model


def after_results(calls: list[tuple[str, str, Any]]) -> Any:
    """A stop for Stream.until: the STEP_FINISHED after the results of all `calls` (a step is saved with its calls
    first, then again with their results)."""
    waiting = {i for i, _, _ in calls}

    def done(event: Any) -> bool:
        if event.type.value == "TOOL_CALL_RESULT":
            waiting.discard(event.tool_call_id)
        return not waiting and event.type.value == "STEP_FINISHED"

    return done


def kinds(events: list[Any]) -> list[str]:
    return [e.type.value for e in events]


def records(events: list[Any]) -> list[tuple[str, str]]:
    """The events that carry a record (text, call, result), by what they are of."""
    found = []
    for e in events:
        kind = e.type.value
        if kind.startswith("TEXT_MESSAGE"):
            found.append((kind, e.message_id))
        elif kind.startswith("TOOL_CALL"):
            found.append((kind, e.tool_call_id))
    return found


def check_sequence(events: list[Any]) -> None:
    """The AG-UI order rules a client holds a stream to: one run, steps closed, a call's start, end and result in
    that order, no record twice."""
    assert kinds(events)[0] == "RUN_STARTED" and kinds(events)[-1] in ("RUN_FINISHED", "RUN_ERROR")
    open_steps: set[str] = set()
    started, ended = set(), set()
    for e in events:
        kind = e.type.value
        if kind == "STEP_STARTED":
            assert e.step_name not in open_steps
            open_steps.add(e.step_name)
        elif kind == "STEP_FINISHED":
            open_steps.remove(e.step_name)
        elif kind == "TOOL_CALL_START":
            started.add(e.tool_call_id)
        elif kind == "TOOL_CALL_END":
            assert e.tool_call_id in started
            ended.add(e.tool_call_id)
    assert not open_steps
    doubled = [r for r, n in Counter(records(events)).items() if n > 1]
    assert doubled == []


def test_a_run_streams_replays_and_resumes(served: tuple[Path, str, Model]) -> None:
    folder, url, model = served
    with httpx2.Client(timeout=60) as client:
        # the first connection: the run starts; it reads the parallel calls and their results, then goes away
        with stream(client, url, run_input(THREAD, "leg-1", "Refund one keyboard of order A123"), ALICE) as first:
            first.until(after_results(PARALLEL))
        seen_first = first.events
        assert kinds(seen_first)[:2] == ["RUN_STARTED", "STATE_SNAPSHOT"]
        calls = [e for e in seen_first if e.type.value == "TOOL_CALL_START"]
        assert [(c.tool_call_id, c.tool_call_name) for c in calls] == [(i, n) for i, n, _ in PARALLEL]
        assert {e.tool_call_id for e in seen_first if e.type.value == "TOOL_CALL_RESULT"} == {
            "toolu_order",
            "toolu_policy",
        }
        assert not model.gate.is_set()  # the run is mid-way: its second model call waits

        # a reconnect with the run id: the store's records first (replayed), then live, then the interrupt
        with stream(client, url, run_input(THREAD, "leg-2"), ALICE) as second:
            replayed = second.until(after_results(PARALLEL))
            model.gate.set()
            live = second.to_end()
        check_sequence(second.events)
        assert records(replayed) == records(seen_first)  # the replay is what the first connection saw, in order
        assert ("TOOL_CALL_START", "toolu_refund") in records(live)
        assert all(r not in records(replayed) for r in records(live))
        end = second.events[-1]
        assert end.type.value == "RUN_FINISHED" and end.outcome.type == "interrupt"
        (waiting,) = end.outcome.interrupts
        assert (waiting.reason, waiting.tool_call_id, waiting.id) == (
            "approval",
            "toolu_refund",
            f"{THREAD}/toolu_refund",
        )
        assert waiting.metadata["arguments"] == REFUND[2]
        deltas = [e for e in second.events if e.type.value == "STATE_DELTA"]
        assert ("/status", "waiting_for_approval") in [(op.path, op.value) for op in deltas[-1].delta]

        # the stranger: no token, a token of no one, a person who may not see the agent: nothing, nothing recorded
        resume = [{"interruptId": waiting.id, "status": "resolved", "payload": {"approved": True}}]
        assert client.post(url, json=run_input(THREAD, "x", resume=resume)).status_code == 401
        headers = {"authorization": "Bearer tok-mallory"}
        assert client.post(url, json=run_input(THREAD, "x", resume=resume), headers=headers).status_code == 401
        bob = {"authorization": f"Bearer {BOB}"}
        assert client.post(url, json=run_input(THREAD, "x", resume=resume), headers=bob).status_code == 404
        assert client.post(url, json=run_input(THREAD, "x"), headers=bob).status_code == 404
        started = client.post(url, json=run_input("thread-bob", "x", "Refund everything"), headers=bob)
        assert started.status_code == 403 and "bob may not run support" in started.text
        rebound = client.post(
            url, json=run_input(THREAD, "x", resume=resume), headers={**bob, "host": "attacker.example"}
        )
        assert rebound.status_code == 421
        assert decisions(folder) == []
        alice = {"authorization": f"Bearer {ALICE}"}
        malformed = client.post(url, json={"threadId": THREAD}, headers=alice)
        assert malformed.status_code == 400 and "not a RunAgentInput (runId" in malformed.json()["error"]
        wordless = client.post(url, json=run_input("thread-empty", "x"), headers=alice)
        assert wordless.status_code == 400 and "a new thread needs a user message" in wordless.json()["error"]
        bad = [{"interruptId": waiting.id, "status": "resolved", "payload": {"approved": "yes"}}]
        refused = client.post(
            url, json=run_input(THREAD, "x", resume=bad), headers={"authorization": f"Bearer {ALICE}"}
        )
        assert refused.status_code == 400 and '{"approved": true}' in refused.json()["error"]
        assert decisions(folder) == []

        # the front end's resume: recorded as `toolwire approve` records it, and the run goes on to its answer
        with stream(client, url, run_input(THREAD, "leg-3", resume=resume), ALICE) as third:
            resumed = third.to_end()
        check_sequence(resumed)
        assert decisions(folder) == [("approve", "alice")]
        assert ("TOOL_CALL_RESULT", "toolu_refund") in records(resumed)
        assert all(r not in records(second.events) for r in records(resumed))  # nothing the front end had, again
        text = "".join(e.delta for e in resumed if e.type.value == "TEXT_MESSAGE_CONTENT")
        assert text == ANSWER
        assert resumed[-1].outcome.type == "success" and resumed[-1].result["status"] == "done"
        assert refunded_cents(folder / "support.sqlite3") == 2500

        # a late reconnect: the whole run from the store, each record once, what the live legs sent together
        with stream(client, url, run_input(THREAD, "leg-4"), ALICE) as again:
            whole = again.to_end()
        check_sequence(whole)
        assert sorted(records(whole)) == sorted(records(second.events) + records(resumed))
        assert (
            client.post(
                url, json=run_input(THREAD, "x", resume=resume), headers={"authorization": f"Bearer {ALICE}"}
            ).status_code
            == 409
        )
        assert decisions(folder) == [("approve", "alice")]


def decisions(folder: Path, run_id: str = THREAD) -> list[tuple[str, str | None]]:
    """The decisions made on the run, with who made them, as the store has them."""

    async def read() -> list[tuple[str, str | None]]:
        store = await open_store(str(folder / "runs.db"))
        try:
            return [(d.decision, d.decided_by) for d in await store.decisions(run_id)]
        finally:
            await store.aclose()

    return anyio.run(read)


def refunded_cents(support_db: Path) -> int:
    conn = sqlite3.connect(support_db)
    try:
        return int(
            conn.execute("SELECT COALESCE(SUM(amount_cents), 0) FROM refunds WHERE order_id = 'A123'").fetchone()[0]
        )
    finally:
        conn.close()
