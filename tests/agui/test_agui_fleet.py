"""`agent serve --ag-ui --fleet`: a front end's thread is submitted to the worker fleet and driven by a real
`toolwire worker` (SQLite run store); the stream only reads the store, and the front end's resume of the approval
interrupt wakes the fleet (fleet/decide.py), whose next leg ends the run."""

import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from agui.agui_procs import people_file, run_input, stream
from agui.subagent_procs import check_subagents
from agui.test_agui_run import check_sequence, records
from fleet.fleet_procs import start_worker, started, support_db, support_server
from helpers.cli import REPO, TOOLWIRE, clean_env
from helpers.polling import wait_until
from helpers.servers import free_port, stop_process, wait_until_ok
from toolwire_client.fleet.submit import FleetClient

THREAD = "fleet-thread-1"
ALICE = "alice-token-0123456789"


@pytest.fixture
def door(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """A worker with the support desk, and the AG-UI door on the fleet (alice may run and decide its runs); the
    served agent's model options are the test's parameter, if it has one."""
    db = str(tmp_path / "runs.db")
    worker = start_worker(db, tmp_path / "w1.log", servers=[support_server(tmp_path)])
    port, log = free_port(), tmp_path / "door.log"
    agent = getattr(request, "param", ("--model", "scripted:support_demo"))
    argv = [
        TOOLWIRE, "agent", "serve", "--ag-ui", "--fleet", *agent,
        "--fleet-server", "support", "--db", db, "--port", str(port),
        "--tokens", str(people_file(tmp_path, {"alice": (ALICE, ["agent*"])})),  # agent.sub: its sub-agents
    ]  # fmt: skip
    with log.open("w") as out:
        proc = subprocess.Popen(argv, cwd=REPO, env=clean_env(), stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: started(worker), "the worker to start", timeout_s=60)
        url = f"http://127.0.0.1:{port}/ag-ui"
        wait_until_ok(url, proc, log, 60, "toolwire agent serve --ag-ui --fleet")
        yield url
    finally:
        stop_process(proc)
        worker.stop()


def test_a_thread_is_driven_by_a_worker_and_its_resume_wakes_the_fleet(door: str, tmp_path: Path) -> None:
    with httpx2.Client(timeout=60) as client:
        with stream(client, door, run_input(THREAD, "leg-1", "Refund one item of order A123"), ALICE) as first:
            asked = first.to_end()
        end = asked[-1]
        assert end.type.value == "RUN_FINISHED" and end.outcome.type == "interrupt", [e.type.value for e in asked]
        (waiting,) = end.outcome.interrupts
        assert waiting.reason == "approval" and waiting.metadata["tool"] == "issue_refund"
        resume = [{"interruptId": waiting.id, "status": "resolved", "payload": {"approved": True}}]
        with stream(client, door, run_input(THREAD, "leg-2", resume=resume), ALICE) as second:
            resumed = second.to_end()
    assert resumed[-1].outcome.type == "success" and resumed[-1].result["status"] == "done"
    text = "".join(e.delta for e in resumed if e.type.value == "TEXT_MESSAGE_CONTENT")
    assert "Refunded one" in text
    assert support_db(tmp_path, THREAD).exists()  # the worker's support server did the refund
    fleet = FleetClient(str(tmp_path / "runs.db"))
    try:
        legs = {w.workflow_id: w.status for w in fleet.legs(THREAD)}
    finally:
        fleet.close()
    woken = [leg for leg in legs if leg.startswith(THREAD + "@")]  # the leg the front end's resume enqueued
    assert legs[THREAD] == "SUCCESS" and len(woken) == 1 and legs[woken[0]] == "SUCCESS", legs


@pytest.mark.parametrize("door", [("--model", "scripted:delegates", "--delegate")], indirect=True)
def test_a_sub_agent_on_the_fleet_streams_and_its_approval_is_resumed(door: str, tmp_path: Path) -> None:
    """The worker drives a parent that delegates; the stream shows the child's steps as an AG-UI subagent (its
    parallel calls too); a reconnect while the child waits replays them; the resume of the child's approval wakes
    the fleet, and the child ends before the parent's delegate result."""
    thread = "fleet-thread-sub"
    with httpx2.Client(timeout=60) as client:
        with stream(client, door, run_input(thread, "leg-1", "Refund one item of order A123"), ALICE) as first:
            asked = first.to_end()
        with stream(client, door, run_input(thread, "leg-2"), ALICE) as again:  # the child waits: a reconnect
            replayed = again.to_end()
        (waiting,) = asked[-1].outcome.interrupts
        child = waiting.subagent_run_id
        assert child is not None and waiting.id == waiting.tool_call_id and waiting.id.startswith(f"{child}/")
        resume = [{"interruptId": waiting.id, "status": "resolved", "payload": {"approved": True}}]
        with stream(client, door, run_input(thread, "leg-3", resume=resume), ALICE) as second:
            resumed = second.to_end()
    check_sequence(asked)
    check_subagents(asked)
    assert records(replayed) == records(asked) and replayed[-1].outcome.interrupts == asked[-1].outcome.interrupts
    (opened,) = [e for e in asked if e.type.value == "SUBAGENT_STARTED"]
    (delegated,) = [e for e in asked if e.type.value == "TOOL_CALL_START" and e.subagent_run_id is None]
    assert (opened.subagent_run_id, opened.parent_tool_call_id) == (child, delegated.tool_call_id)
    steps = {}
    for e in asked:
        if e.type.value == "TOOL_CALL_START" and e.subagent_run_id == child:
            steps.setdefault(e.parent_message_id, []).append(e.tool_call_name)
    assert next(iter(steps.values())) == ["get_order", "search_orders"]  # the child's parallel calls
    assert asked[-2].type.value == "SUBAGENT_FINISHED" and asked[-2].outcome.type == "suspended"
    check_sequence(resumed)
    check_subagents(resumed)
    ends = [
        e
        for e in resumed
        if e.type.value == "SUBAGENT_FINISHED" or (e.type.value == "TOOL_CALL_RESULT" and e.subagent_run_id is None)
    ]
    assert [e.type.value for e in ends] == ["SUBAGENT_FINISHED", "TOOL_CALL_RESULT"]
    assert ends[1].tool_call_id == delegated.tool_call_id and ends[0].outcome.type == "success"
    assert (
        resumed[-1].outcome.type == "success"
        and "A sub-agent worked on it: Refunded one" in resumed[-1].result["answer"]
    )
