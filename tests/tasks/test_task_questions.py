"""Elicitation inside an MCP task, toolwire's client against toolwire's server over HTTP: a task's question pauses a
real `toolwire run` durably (`approvals` lists it, `answer` records it, `trace show` shows the wait and the task),
`resume` follows the same task and answers it with `tasks/update`; an `on_elicit` callback answers at once. The tool
runs once either way."""

import json
from pathlib import Path
from typing import Any

import anyio.to_thread
from click.testing import CliRunner, Result

from elicit.driver import asks
from elicit.test_elicit_runs import DRIVER
from helpers.cli import run_toolwire
from helpers.polling import wait_until
from helpers.servers import HttpServer, tokens_file
from helpers.tasks_rpc import result, rpc
from toolwire_client.cli import main
from toolwire_client.config import RunConfig, RunLimits
from toolwire_client.loop import Agent
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.run.state import RunState
from toolwire_client.store import RunSummary, open_store
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.elicitation import InputAnswer, InputWanted

TOOLS = "tests/tasks/asking_tools.py:registry"


def events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def cli(db: Path, *args: str) -> Result:
    runner = CliRunner()
    return await anyio.to_thread.run_sync(lambda: runner.invoke(main, [*args, "--db", str(db)]))


def served(tmp_path: Path, log: Path) -> HttpServer:
    return HttpServer(TOOLS, env={"ELICIT_LOG": str(log), "TOOLWIRE_TASK_STORE": str(tmp_path / "tasks.sqlite")})


async def paused_by_a_question(db: Path, server: HttpServer, task: str, asked: str) -> RunState:
    """`toolwire run TASK` on the scripted model `asks` against `server`, stopped by the tool's question `asked`:
    the run as saved."""
    model = ("--model", "scripted:asks", "--server-url", server.url, "--db", str(db))
    first = await anyio.to_thread.run_sync(lambda: run_toolwire("run", task, *model, command=DRIVER, timeout_s=90))
    assert asked in first.stdout + first.stderr, first.stdout + first.stderr
    [run] = await saved_runs(db)
    return await saved(db, run.run_id)


async def resumed_to_done(db: Path, run_id: str) -> None:
    resumed = await anyio.to_thread.run_sync(
        lambda: run_toolwire("resume", run_id, "--db", str(db), command=DRIVER, timeout_s=90)
    )
    assert f"{run_id}: done" in resumed.stdout, resumed.stdout + resumed.stderr


async def saved_runs(db: Path) -> list[RunSummary]:
    store = await open_store(str(db))
    try:
        return await store.list_runs()
    finally:
        await store.aclose()


async def saved(db: Path, run_id: str) -> RunState:
    store = await open_store(str(db))
    try:
        return await store.load(run_id)
    finally:
        await store.aclose()


async def test_a_task_s_question_pauses_the_run_and_resume_answers_the_same_task(tmp_path: Path) -> None:
    db, log = tmp_path / "runs.db", tmp_path / "tool.jsonl"
    with served(tmp_path, log) as server:
        paused = await paused_by_a_question(db, server, "Book a table at Noma", "Who is the table at Noma for?")
        [pending] = paused.pending
        wanted = pending.input
        assert pending.state == "pending_input" and wanted is not None and wanted.era == "task"
        assert wanted.task_id is not None and wanted.task_id == pending.task_id  # the task is kept, not re-created

        listed = await cli(db, "approvals")
        assert "input requested" in listed.stdout and "Who is the table at Noma for?" in listed.stdout
        shown = await cli(db, "trace", "show", paused.run_id)
        assert "waiting for input: Who is the table at Noma for?" in shown.stdout, shown.stdout
        assert f"task {wanted.task_id[:8]}" in shown.stdout and "input_required" in shown.stdout, shown.stdout
        unfit = await cli(db, "answer", paused.run_id, "--value", '{"name": "Ada", "party": 0}')
        assert unfit.exit_code != 0 and "minimum of 1" in unfit.stderr, unfit.stderr
        given = await cli(db, "answer", paused.run_id, "--json", '{"name": "Ada", "party": 4}', "--as", "host")
        assert given.exit_code == 0, given.stderr  # the old spelling of --value still works this release, with a note
        assert "note: `--json VALUE` is now `--value VALUE`" in given.stderr, given.stderr

        await resumed_to_done(db, paused.run_id)
        shown = await cli(db, "trace", "show", paused.run_id)
    final = await saved(db, paused.run_id)
    assert final.final_answer == "booked Noma for Ada, 4 people"
    assert [e["event"] for e in events(log)] == ["started", "answered"]  # the tool ran once, through its question
    assert events(log)[1]["content"] == {"name": "Ada", "party": 4}
    assert f"task {wanted.task_id[:8]}" in shown.stdout and "completed" in shown.stdout, shown.stdout


async def test_on_elicit_answers_a_task_s_question_at_once(tmp_path: Path) -> None:
    log, asked = tmp_path / "tool.jsonl", []

    async def on_elicit(wanted: InputWanted) -> InputAnswer:
        asked.append(wanted)
        return InputAnswer(action="decline")

    with served(tmp_path, log) as server:
        async with ToolBox([McpSource("asking", url=server.url)]) as box:
            config = RunConfig(model="scripted:asks", limits=RunLimits(max_steps=4))
            done = await Agent(ScriptedModel(asks), box, config=config, on_elicit=on_elicit).run("Book a table at Noma")
    assert done.status == "done" and done.final_answer == "not booked: the person chose decline"
    [wanted] = asked
    assert wanted.era == "task" and wanted.task_id and wanted.requested_schema is not None
    assert [(e["event"], e.get("action")) for e in events(log)] == [("started", None), ("answered", "decline")]


async def test_a_question_before_the_task_pauses_the_run_and_the_answer_hands_out_the_task(tmp_path: Path) -> None:
    """An `ask_before_task` tool: its question is the call's InputRequiredResult, the call sent again with the answer
    (after `toolwire answer` and `resume`) gets the task it parked, which runs on; the tool ran once."""
    db, log = tmp_path / "runs.db", tmp_path / "tool.jsonl"
    with served(tmp_path, log) as server:
        paused = await paused_by_a_question(db, server, "log in to the bank", "Log in to bank")
        [pending] = paused.pending
        assert pending.input is not None and pending.input.era == "2026-07-28" and pending.input.mode == "url"
        assert pending.task_id is None and pending.input.request_state  # the task comes with the answer, not before
        given = await cli(db, "answer", paused.run_id, "--accept")
        assert given.exit_code == 0, given.stderr
        await resumed_to_done(db, paused.run_id)
        shown = await cli(db, "trace", "show", paused.run_id)
    assert "connected to bank [task " in shown.stdout and " completed]" in shown.stdout, shown.stdout
    assert [(e["event"], e.get("action")) for e in events(log)] == [("started", None), ("answered", "accept")]


def test_the_first_round_s_state_hands_its_task_only_to_its_agent_and_only_once(tmp_path: Path) -> None:
    """Hostile: another agent replaying the sealed requestState gets "unknown task"; a changed state is refused; the
    owner replaying it after answering gets the same task, and its first answer stands."""
    log = tmp_path / "tool.jsonl"
    tokens = tokens_file(tmp_path, {"alice": ("tok-alice", ["*"]), "bob": ("tok-bob", ["*"])})
    env = {"ELICIT_LOG": str(log), "TOOLWIRE_TASK_STORE": str(tmp_path / "tasks.sqlite")}
    asking = {"elicitation": {"form": {}, "url": {}}}
    call = {"name": "connect", "arguments": {"service": "bank"}}
    with HttpServer(TOOLS, "--tokens", str(tokens), env=env) as server:
        first = result(server.url, "tools/call", call, token="tok-alice", capabilities=asking)
        assert first["resultType"] == "input_required" and "taskId" not in first, first
        [key] = first["inputRequests"]
        state = first["requestState"]

        def again(token: str, answer: str, sealed: str = state) -> dict[str, Any]:
            params = {**call, "inputResponses": {key: {"action": answer}}, "requestState": sealed}
            return rpc(server.url, "tools/call", params, token=token, capabilities=asking)

        stolen = again("tok-bob", "decline")
        assert stolen["error"]["code"] == -32602 and "unknown task" in stolen["error"]["message"], stolen
        changed = again("tok-alice", "decline", state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB"))
        assert "error" in changed, changed
        handed = again("tok-alice", "accept")["result"]
        assert handed["resultType"] == "task" and "requestState" not in handed, handed
        replayed = again("tok-alice", "decline")["result"]
        assert replayed["taskId"] == handed["taskId"]

        def done() -> dict[str, Any] | None:
            task = result(server.url, "tasks/get", {"taskId": handed["taskId"]}, token="tok-alice")
            return task if task["status"] == "completed" else None

        finished = wait_until(done, "the task to complete", timeout_s=30)
    assert finished["result"]["content"][0]["text"] == "connected to bank"
    assert [(e["event"], e.get("action")) for e in events(log)] == [("started", None), ("answered", "accept")]


def test_a_prompt_asks_in_rounds_like_a_tool(tmp_path: Path) -> None:
    """prompts/get of a prompt that calls `ctx.elicit`: an InputRequiredResult, then (called again with the answer)
    its messages; a client that declared no elicitation gets a readable error, not a question it cannot answer."""
    asking = {"elicitation": {"form": {}}}
    get = {"name": "briefing", "arguments": {"restaurant": "Noma"}}
    with served(tmp_path, tmp_path / "tool.jsonl") as server:
        first = result(server.url, "prompts/get", get, capabilities=asking)
        assert first["resultType"] == "input_required", first
        [(key, request)] = first["inputRequests"].items()
        assert request["params"]["message"] == "Who is the briefing on Noma for?"
        answer = {"action": "accept", "content": {"name": "Ada", "party": 2}}
        params = {**get, "inputResponses": {key: answer}}  # one question: no earlier answers, no requestState
        done = result(server.url, "prompts/get", params, capabilities=asking)
        assert done["messages"][0]["content"]["text"] == "Brief Ada on Noma"
        refused = rpc(server.url, "prompts/get", get)
        assert "cannot answer questions" in refused["error"]["message"], refused


def test_a_task_whose_client_cannot_answer_ends_with_a_readable_error(tmp_path: Path) -> None:
    """A client that declared the tasks extension but no elicitation: the task's question is an error result the
    model can read (the task completes with isError), never a task waiting for ever."""
    call = {"name": "book_table", "arguments": {"restaurant": "Noma"}}
    with served(tmp_path, tmp_path / "tool.jsonl") as server:
        created = result(server.url, "tools/call", call)

        def ended() -> dict[str, Any] | None:
            if created["resultType"] != "task":
                return created
            task = result(server.url, "tasks/get", {"taskId": created["taskId"]})
            return task["result"] if task["status"] == "completed" else None

        answer = wait_until(ended, "the task to end", timeout_s=30)
    assert answer["isError"] is True and "cannot answer questions" in answer["content"][0]["text"], answer
