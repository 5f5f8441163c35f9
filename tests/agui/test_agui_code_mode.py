"""A code-mode script in the AG-UI stream, through `toolwire agent serve --ag-ui --code-mode on` in its own process,
on the real support tool server and a loopback Anthropic server, every event validated by the ag-ui-protocol types:
the model's run_code call runs a script whose two parallel calls are a child run (the script's), streamed as an
AG-UI subagent under its run id with call ids apart from the parent's, then run_code's result and RUN_FINISHED; a
reconnect after the run replays the same events, each once."""

import json
from pathlib import Path
from typing import Any

import httpx2
from agui_procs import agent_server, people_file, run_input, stream
from subagent_procs import check_subagents
from test_agui_run import check_sequence, records

from helpers.fake_providers import FakeProvider, RecordedRequest, Reply, anthropic_message, assistant_turns
from toolwire_client import texts
from toolwire_client.tools.code_mode.source import script_run_id

ALICE = "tok-alice-0123456789"
THREAD = "thread-code-a123"
CODE = """
import asyncio
order, orders = await asyncio.gather(get_order(order_id="A123"), search_orders(customer_id="cus_8123"))
{"item": order["item"], "orders": len(orders)}
"""
RUN_CODE = ("call_0", "run_code", {"code": CODE})  # the id the script's first call has too
ASKED = "Look up order A123 and its customer's orders"
ANSWER = "Order A123 is a keyboard; the customer has 3 orders."
SCRIPT = script_run_id(THREAD, RUN_CODE[0])


def carried(events: list[Any]) -> list[dict[str, Any]]:
    """The events of the run's records (texts, tool calls and results, the script's start and end) and its end, as
    data (timestamps apart). Not the step frames or state snapshots: those say when a live stream saw what (the
    script's calls before their results: two frames of one step; the run's totals as they were then)."""
    kept = ("TEXT_MESSAGE", "TOOL_CALL", "SUBAGENT", "RUN_FINISHED")
    return [e.model_dump(exclude={"timestamp", "run_id"}) for e in events if e.type.value.startswith(kept)]


def model(request: RecordedRequest) -> Reply:
    """The loopback model: one run_code call, then its answer."""
    asked = assistant_turns(request)
    return [anthropic_message("Scripting the lookups.", [RUN_CODE]), anthropic_message(ANSWER)][asked]


def test_a_scripts_calls_stream_as_its_child_run_and_replay_once(tmp_path: Path) -> None:
    tokens = people_file(tmp_path, {"alice": (ALICE, ["support*"])})
    with (
        FakeProvider(responder=model) as fake,
        agent_server(tmp_path, fake.anthropic_url, "--code-mode", "on", "--tokens", str(tokens)) as url,
        httpx2.Client(timeout=60) as client,
    ):
        with stream(client, url, run_input(THREAD, "leg-1", ASKED), ALICE) as first:
            seen = first.to_end()
        check_sequence(seen)
        check_subagents(seen)
        (coded,) = [e for e in seen if e.type.value == "TOOL_CALL_START" and e.subagent_run_id is None]
        assert (coded.tool_call_id, coded.tool_call_name) == (RUN_CODE[0], RUN_CODE[1])
        (opened,) = [e for e in seen if e.type.value == "SUBAGENT_STARTED"]
        assert (opened.subagent_run_id, opened.name) == (SCRIPT, "support.code")
        assert opened.description == texts.script_task(CODE)
        assert (opened.parent_tool_call_id, opened.parent_message_id) == (RUN_CODE[0], f"{THREAD}.step1")
        (closed,) = [e for e in seen if e.type.value in ("SUBAGENT_FINISHED", "SUBAGENT_ERROR")]
        assert closed.type.value == "SUBAGENT_FINISHED" and closed.outcome.type == "success"
        assert seen.index(coded) < seen.index(opened) < seen.index(closed)

        # the script's calls: the child's, under its run id, in one step, their ids apart from the parent's
        theirs = seen[seen.index(opened) + 1 : seen.index(closed)]
        assert theirs and all(e.subagent_run_id == SCRIPT for e in theirs)
        calls = [e for e in theirs if e.type.value == "TOOL_CALL_START"]
        assert sorted(c.tool_call_name for c in calls) == ["get_order", "search_orders"]
        assert [c.tool_call_id for c in calls] == [f"{SCRIPT}/call_0", f"{SCRIPT}/call_1"]  # not run_code's call_0
        assert len({c.parent_message_id for c in calls}) == 1
        results = {e.tool_call_id: e.content for e in theirs if e.type.value == "TOOL_CALL_RESULT"}
        assert set(results) == {c.tool_call_id for c in calls}
        assert '"A123"' in results[next(c.tool_call_id for c in calls if c.tool_call_name == "get_order")]

        # then the parent's run_code result (what the script returned), its answer, the run's end
        rest = seen[seen.index(closed) + 1 :]
        (returned,) = [e for e in rest if e.type.value == "TOOL_CALL_RESULT"]
        assert returned.tool_call_id == RUN_CODE[0] and returned.subagent_run_id is None
        assert json.loads(returned.content) == {"item": "keyboard", "orders": 3}
        said = [(e.subagent_run_id, e.delta) for e in seen if e.type.value == "TEXT_MESSAGE_CONTENT"]
        assert said == [(None, "Scripting the lookups."), (None, ANSWER)]
        assert seen[-1].type.value == "RUN_FINISHED" and seen[-1].outcome.type == "success"
        assert seen[-1].result["answer"] == ANSWER

        # a reconnect after the run: the same events from the store, each once
        with stream(client, url, run_input(THREAD, "leg-2"), ALICE) as again:
            replayed = again.to_end()
        check_sequence(replayed)
        check_subagents(replayed)
        assert records(replayed) == records(seen)  # each record once, in the same order
        assert carried(replayed) == carried(seen)  # the same content


FAILING = 'order = await get_order(order_id="A123")\nawait get_policy(topic="refunds")\n'
"""A script that calls a tool code mode does not offer it (the support server's script tools have no get_policy)."""


def test_a_failed_script_ends_its_subagent_with_a_readable_message_and_its_stop_reason_as_code(
    tmp_path: Path,
) -> None:
    def failing(request: RecordedRequest) -> Reply:
        asked = assistant_turns(request)
        return [anthropic_message("", [("call_0", "run_code", {"code": FAILING})]), anthropic_message(ANSWER)][asked]

    tokens = people_file(tmp_path, {"alice": (ALICE, ["support*"])})
    with (
        FakeProvider(responder=failing) as fake,
        agent_server(tmp_path, fake.anthropic_url, "--code-mode", "on", "--tokens", str(tokens)) as url,
        httpx2.Client(timeout=60) as client,
        stream(client, url, run_input(THREAD, "leg-1", ASKED), ALICE) as first,
    ):
        seen = first.to_end()
    check_sequence(seen)
    check_subagents(seen)
    (closed,) = [e for e in seen if e.type.value in ("SUBAGENT_FINISHED", "SUBAGENT_ERROR")]
    assert closed.type.value == "SUBAGENT_ERROR" and closed.subagent_run_id == SCRIPT
    assert closed.code == "script_error"  # the stop reason, for code
    assert "get_policy" in closed.message and closed.message != closed.code  # the report, for people
    assert seen[-1].type.value == "RUN_FINISHED"  # the parent read the script's error and answered
