"""A run whose tool asks a person a question pauses durably, like an approval: `toolwire approvals` shows the
question, `toolwire answer` records one answer (checked against the server's schema), `resume` sends the call again
with it; or an `on_elicit` callback answers at once. toolwire's client against toolwire's server, both eras, stdio and
HTTP, with a scripted model."""

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import anyio.to_thread
import pytest
from click.testing import CliRunner, Result

from elicit.driver import asks
from helpers.cli import run_toolwire
from helpers.servers import REPO, HttpServer, serve_argv
from toolwire_client.cli import main
from toolwire_client.config import RunConfig, RunLimits, ServerSpec
from toolwire_client.loop import Agent
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.run.state import RunState
from toolwire_client.store import SqlRunStore, open_store
from toolwire_client.store.answers import AnswerRefused, answer
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.elicitation import InputAnswer, InputWanted

TOOLS = "tests/elicit/elicit_tools.py:registry"
DRIVER = [sys.executable, str(Path(__file__).with_name("driver.py"))]
ERAS: list[Literal["auto", "legacy"]] = ["auto", "legacy"]


def runs(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def source(log: Path, mode: Literal["auto", "legacy"] = "auto", url: str | None = None) -> McpSource:
    if url is not None:
        return McpSource("elicit", url=url, mode=mode)
    return McpSource(
        "elicit", command=serve_argv(TOOLS, "--stdio"), env={"ELICIT_LOG": str(log)}, cwd=str(REPO), mode=mode
    )


async def run_once(
    box: ToolBox, store: SqlRunStore | None, task: str, on_elicit: Any = None, state: RunState | None = None
) -> RunState:
    """The task run (or `state` resumed) on a fresh agent."""
    config = RunConfig(model="scripted:asks", limits=RunLimits(max_steps=4))
    agent = Agent(ScriptedModel(asks), box, config=config, store=store, on_elicit=on_elicit)
    return await (agent.resume(state) if state is not None else agent.run(task))


def toolwire(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real command in its own process (its stderr as a user sees it)."""
    return run_toolwire(*args, "--db", str(db), command=DRIVER, timeout_s=60)


async def in_process(db: Path, *args: str) -> Result:
    """The same command in this process (in a thread: it runs its own event loop), without an interpreter's start."""
    runner = CliRunner()
    return await anyio.to_thread.run_sync(lambda: runner.invoke(main, [*args, "--db", str(db)]))


async def test_a_question_pauses_the_run_and_the_cli_answers_it(tmp_path: Path) -> None:
    db, log = tmp_path / "runs.db", tmp_path / "tool.jsonl"
    store = await open_store(str(db))
    try:
        server = ServerSpec(
            name="elicit", command=serve_argv(TOOLS, "--stdio"), env={"ELICIT_LOG": str(log)}, cwd=str(REPO)
        )
        config = RunConfig(model="scripted:asks", servers=[server], limits=RunLimits(max_steps=4))
        from toolwire_client.assembly.agents import build_agent

        paused = await build_agent(config, store=store).run("Book a table at Noma")
    finally:
        await store.aclose()
    run_id = paused.run_id
    assert paused.status == "waiting_for_approval"
    [pending] = paused.pending
    assert pending.state == "pending_input" and pending.input is not None and pending.input.era == "2026-07-28"
    assert runs(log) == []  # the tool stopped at its question: nothing ran past it

    listed = await in_process(db, "approvals")
    assert "input requested" in listed.stdout and "Who is the table at Noma for?" in listed.stdout
    assert '"party"' in listed.stdout and "call_book" in listed.stdout
    shown = await in_process(db, "trace", "show", run_id)
    assert 'book_table({"restaurant": "Noma"}) | waiting for input: Who is the table at Noma for?' in shown.stdout

    early = await in_process(db, "resume", run_id)  # nothing answered yet: it says how to answer, and runs nothing
    assert f"`toolwire answer {run_id} call_book --value '{{...}}'`" in early.stdout, early.stdout + early.stderr
    unfit = await in_process(db, "answer", run_id, "--value", '{"name": "Ada", "party": "four"}')
    assert unfit.exit_code != 0 and len(unfit.stderr.strip().splitlines()) == 1, unfit.stderr
    assert "'four' is not of type 'integer'" in unfit.stderr and '"party": integer' in unfit.stderr
    garbled = toolwire(db, "answer", run_id, "--value", "{name: Ada}")
    assert (
        garbled.returncode != 0
        and "--value is not JSON" in garbled.stderr
        and len(garbled.stderr.strip().splitlines()) == 1
    )

    given = await in_process(db, "answer", run_id, "--value", '{"name": "Ada", "party": 4}', "--as", "maître d")
    assert given.exit_code == 0 and "by maître d" in given.stdout, given.stderr
    listed = await in_process(db, "approvals", "--json")
    [recorded] = json.loads(listed.stdout)["answered"]
    assert (recorded["call_id"], recorded["action"], recorded["by"]) == ("call_book", "accept", "maître d")
    again = await in_process(db, "answer", run_id, "call_book", "--decline")
    assert again.exit_code != 0 and "already answered (accept, by maître d)" in again.stderr

    resumed = await in_process(db, "resume", run_id)
    assert resumed.exit_code == 0 and f"{run_id}: done" in resumed.stdout, resumed.stdout + resumed.stderr
    store = await open_store(str(db))
    try:
        final = await store.load(run_id)
    finally:
        await store.aclose()
    assert final.final_answer == "booked Noma for Ada, 4 people"
    assert [(r["action"], r["content"]) for r in runs(log)] == [("accept", {"name": "Ada", "party": 4})]  # ran once


@pytest.mark.parametrize("era", ERAS)
async def test_on_elicit_answers_at_once_and_a_decline_reaches_the_tool_on_resume(
    era: Literal["auto", "legacy"], tmp_path: Path
) -> None:
    log, asked = tmp_path / "tool.jsonl", []

    async def on_elicit(wanted: InputWanted) -> InputAnswer:
        asked.append(wanted)
        return InputAnswer(action="accept", content={"name": "Grace", "party": 2})

    store = await open_store(str(tmp_path / "runs.db"))
    try:
        async with ToolBox([source(log, era)]) as box:  # one server for the three runs
            answered = await run_once(box, None, "Book a table at Noma", on_elicit=on_elicit)
            assert answered.status == "done" and answered.final_answer == "booked Noma for Grace, 2 people"
            assert [w.message for w in asked] == ["Who is the table at Noma for?"]

            paused = await run_once(box, store, "Book a table at Noma")
            [pending] = paused.pending
            assert pending.input is not None and pending.input.era == ("2026-07-28" if era == "auto" else "handshake")
            await answer(store, paused.run_id, None, InputAnswer(action="decline"), by="alice")
            with pytest.raises(AnswerRefused, match="already answered"):
                await answer(store, paused.run_id, "call_book", InputAnswer(action="cancel"), by="bob")
            done = await run_once(box, store, "", state=await store.load(paused.run_id))
    finally:
        await store.aclose()
    assert done.status == "done" and done.final_answer == "not booked: the person chose decline"
    # 2026-07-28: the paused tool ran once, with the answer. Handshake era: the first send was answered `cancel` (no
    # one to ask), so the tool ran to its end then too, and again with the person's answer.
    expected = ["accept", "decline"] if era == "auto" else ["accept", "cancel", "decline"]
    assert [r["action"] for r in runs(log)] == expected


async def test_url_question_over_http_is_answered_and_resumed(tmp_path: Path) -> None:
    log = tmp_path / "tool.jsonl"
    store = await open_store(str(tmp_path / "runs.db"))
    try:
        with HttpServer(TOOLS, env={"ELICIT_LOG": str(log)}) as server:
            async with ToolBox([source(log, url=server.url)]) as box:
                paused = await run_once(box, store, "log in to the bank")
            [pending] = paused.pending
            assert pending.input is not None and pending.input.mode == "url"
            assert pending.input.url == "https://login.example.com/bank"
            listed = await in_process(tmp_path / "runs.db", "approvals")
            assert "visit https://login.example.com/bank" in listed.stdout and "Log in to bank" in listed.stdout
            with pytest.raises(AnswerRefused, match="answered by --accept"):
                await answer(store, paused.run_id, None, InputAnswer(action="accept", content={"x": 1}))
            await answer(store, paused.run_id, None, InputAnswer(action="accept"))
            async with ToolBox([source(log, url=server.url)]) as box:  # a new connection, as another process's
                done = await run_once(box, store, "", state=await store.load(paused.run_id))
                # Hostile: an answer written into the saved state by hand, never given with `toolwire answer`.
                forged = await run_once(box, store, "log in to the bank")
                forged.pending[0] = replace(
                    forged.pending[0], state="answered", answer=InputAnswer(action="accept", by="mallory")
                )
                await store.save(forged)
                stopped = await run_once(box, store, "", state=await store.load(forged.run_id))
            tampered = await store.tampered()
    finally:
        await store.aclose()
    assert done.final_answer == "connected to bank"
    assert stopped.status == "failed" and stopped.stop_reason == "tampered"
    assert [(r, c) for r, c, *_ in tampered] == [(forged.run_id, "call_connect")]
    assert [r["action"] for r in runs(log)] == ["accept"]  # the forged answer never reached the tool
