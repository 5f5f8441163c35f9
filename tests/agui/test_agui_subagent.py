"""A sub-agent's steps in the AG-UI stream, through `toolwire agent serve --ag-ui --delegate` in its own process, on
the real support tool server and a loopback Anthropic server, every event validated by the ag-ui-protocol types: the
parent's delegate call starts a child run, streamed as an AG-UI subagent (SUBAGENT_STARTED naming the call, its
parallel calls and results under its run id, with ids apart from the parent's); a reconnect in the middle of the
child's run replays it from the store and goes on live, no event lost or doubled; the child's approval is the
parent's interrupt, and the front end's resume reaches the child, which ends before the parent's delegate result."""

from pathlib import Path
from typing import Any

import httpx2
from agui_procs import agent_server, people_file, run_input, stream
from subagent_procs import ANSWER, CHILD_ANSWER, DELEGATE, LOOKUPS, REFUND, TASK, DelegatingModel, check_subagents
from test_agui_run import check_sequence, decisions, kinds, records, refunded_cents

from helpers.fake_providers import FakeProvider
from toolwire_client.tools.delegate import child_run_id

ALICE, BOB = "tok-alice-0123456789", "tok-bob-0123456789"
THREAD = "thread-delegated"
CHILD = child_run_id(THREAD, DELEGATE[0])
CHILD_LOOKUPS = [f"{CHILD}/{i}" for i, _, _ in LOOKUPS]
CHILD_REFUND = f"{CHILD}/{REFUND[0]}"


def after_child_lookups() -> Any:
    """A stop for Stream.until: the child's step frame closed once both lookups' results are in (its step is saved
    with its calls first, then again with their results)."""
    waiting = set(CHILD_LOOKUPS)

    def done(event: Any) -> bool:
        if event.type.value == "TOOL_CALL_RESULT":
            waiting.discard(event.tool_call_id)
        return not waiting and event.type.value == "STEP_FINISHED" and event.subagent_run_id == CHILD

    return done


def unframed(events: list[Any]) -> list[str]:
    """The kinds of events but the step frames and state snapshots: those say when a live stream saw what (calls
    seen before their results are framed apart), where a replay from the store frames each step once."""
    return [kind for kind in kinds(events) if not kind.startswith(("STEP_", "STATE_"))]


def test_a_sub_agent_streams_replays_and_its_approval_is_resumed(tmp_path: Path) -> None:
    tokens = people_file(tmp_path, {"alice": (ALICE, ["support*"]), "bob": (BOB, ["support"])})
    model = DelegatingModel(gated=True)
    with (
        FakeProvider(responder=model) as fake,
        agent_server(tmp_path, fake.anthropic_url, "--delegate", "--tokens", str(tokens)) as url,
        httpx2.Client(timeout=60) as client,
    ):
        # the first connection: the parent's delegate call, then the child's parallel lookups; then it goes away
        with stream(client, url, run_input(THREAD, "leg-1", TASK), ALICE) as first:
            first.until(after_child_lookups())
        seen = first.events
        check_subagents(seen)
        order = kinds(seen)
        assert order[:2] == ["RUN_STARTED", "STATE_SNAPSHOT"]
        (delegated,) = [e for e in seen if e.type.value == "TOOL_CALL_START" and e.subagent_run_id is None]
        assert (delegated.tool_call_id, delegated.tool_call_name) == (DELEGATE[0], DELEGATE[1])
        (opened,) = [e for e in seen if e.type.value == "SUBAGENT_STARTED"]
        assert (opened.subagent_run_id, opened.name, opened.description) == (CHILD, "support.sub", TASK)
        assert (opened.parent_tool_call_id, opened.parent_message_id) == (DELEGATE[0], f"{THREAD}.step1")
        assert opened.parent_subagent_run_id is None
        assert seen.index(opened) > seen.index(delegated)
        theirs = seen[seen.index(opened) + 1 :]
        assert theirs and all(e.subagent_run_id == CHILD for e in theirs)  # the child's, attributed to it
        calls = [e for e in theirs if e.type.value == "TOOL_CALL_START"]
        assert [(c.tool_call_id, c.tool_call_name, c.parent_message_id) for c in calls] == [
            (f"{CHILD}/{i}", name, f"{CHILD}.step1") for i, name, _ in LOOKUPS
        ]
        assert {e.tool_call_id for e in theirs if e.type.value == "TOOL_CALL_RESULT"} == set(CHILD_LOOKUPS)
        text = [e.delta for e in theirs if e.type.value == "TEXT_MESSAGE_CONTENT"]
        assert text == ["Looking it up."]
        assert ("TOOL_CALL_RESULT", DELEGATE[0]) not in records(seen)  # the parent's call waits on the child
        assert not model.gate.is_set()  # the child is mid-way: its second model call waits

        # a reconnect in the middle of the child's run: the store's records (the child's too), then live
        with stream(client, url, run_input(THREAD, "leg-2"), ALICE) as second:
            replayed = second.until(after_child_lookups())
            model.gate.set()
            live = second.to_end()
        check_sequence(second.events)
        check_subagents(second.events)
        assert records(replayed) == records(seen) and unframed(replayed) == unframed(seen)
        assert ("TOOL_CALL_START", CHILD_REFUND) in records(live)
        assert all(r not in records(replayed) for r in records(live))
        assert "SUBAGENT_STARTED" not in kinds(live)  # the child is still the one started in the replay
        *_, suspended, end = live
        assert suspended.type.value == "SUBAGENT_FINISHED" and suspended.subagent_run_id == CHILD
        assert suspended.outcome.type == "suspended" and suspended.outcome.interrupt_ids == [CHILD_REFUND]
        assert end.type.value == "RUN_FINISHED" and end.outcome.type == "interrupt"
        (waiting,) = end.outcome.interrupts
        assert (waiting.id, waiting.reason, waiting.tool_call_id, waiting.subagent_run_id) == (
            CHILD_REFUND,
            "approval",
            CHILD_REFUND,
            CHILD,
        )
        assert waiting.metadata["arguments"] == REFUND[2]
        assert refunded_cents(tmp_path / "support.sqlite3") == 0

        # bob sees the agent `support` but not its sub-agents (`support.sub`), as in the console: none of the
        # child's steps; the interrupt names no call of it, and his resume decides nothing
        with stream(client, url, run_input(THREAD, "bob-1"), BOB) as bobs:
            his = bobs.to_end()
        assert [e for e in his if getattr(e, "subagent_run_id", None) is not None] == []
        assert records(his) == [r for r in records(second.events) if not r[1].startswith(CHILD)]
        (told,) = his[-1].outcome.interrupts
        assert (told.id, told.tool_call_id, told.subagent_run_id) == (CHILD_REFUND, None, None)
        resume = [{"interruptId": told.id, "status": "resolved", "payload": {"approved": True}}]
        refused = client.post(
            url, json=run_input(THREAD, "x", resume=resume), headers={"authorization": f"Bearer {BOB}"}
        )
        assert refused.status_code == 404 and decisions(tmp_path, CHILD) == []

        # the front end's resume reaches the child: it refunds and answers, then the parent gets the answer
        resume = [{"interruptId": waiting.id, "status": "resolved", "payload": {"approved": True}}]
        with stream(client, url, run_input(THREAD, "leg-3", resume=resume), ALICE) as third:
            resumed = third.to_end()
        check_sequence(resumed)
        check_subagents(resumed)
        assert all(r not in records(second.events) for r in records(resumed))
        shape = [
            (e.type.value, getattr(e, "tool_call_id", None))
            for e in resumed
            if e.type.value in ("SUBAGENT_STARTED", "SUBAGENT_FINISHED", "TOOL_CALL_RESULT", "RUN_FINISHED")
        ]
        assert shape == [
            ("SUBAGENT_STARTED", None),
            ("TOOL_CALL_RESULT", CHILD_REFUND),
            ("SUBAGENT_FINISHED", None),
            ("TOOL_CALL_RESULT", DELEGATE[0]),
            ("RUN_FINISHED", None),
        ]
        (finished,) = [e for e in resumed if e.type.value == "SUBAGENT_FINISHED"]
        assert finished.outcome.type == "success" and finished.result["answer"] == CHILD_ANSWER
        said = [(e.subagent_run_id, e.delta) for e in resumed if e.type.value == "TEXT_MESSAGE_CONTENT"]
        assert said == [(CHILD, CHILD_ANSWER), (None, ANSWER)]
        assert resumed[-1].outcome.type == "success" and resumed[-1].result["answer"] == ANSWER
        assert refunded_cents(tmp_path / "support.sqlite3") == 2500
        assert decisions(tmp_path, CHILD) == [("approve", "alice")]

        # a late reconnect: the whole thread from the store, each record once, the child started and ended once
        with stream(client, url, run_input(THREAD, "leg-4"), ALICE) as again:
            whole = again.to_end()
        check_sequence(whole)
        check_subagents(whole)
        assert sorted(records(whole)) == sorted(records(second.events) + records(resumed))
        assert kinds(whole).count("SUBAGENT_STARTED") == 1 and kinds(whole).count("SUBAGENT_FINISHED") == 1
