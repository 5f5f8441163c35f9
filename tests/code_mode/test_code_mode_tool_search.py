"""Code mode over a tool search (`--code-mode only --tool-search on`), over the real support ledger on stdio: a
script calls tools no search has loaded (they run on the server), `run_code` lists only the loaded ones with a line
saying search_tools finds the rest, and a search lists what it found in the next request's run_code."""

import json
from pathlib import Path

from code_mode.test_code_mode import FAN_OUT, LEDGER, REPO, _codes, expected_totals, load
from helpers.cli import TOOLWIRE
from toolwire_client.assembly.agents import build_agent
from toolwire_client.config import RunConfig, RunLimits, ServerSpec
from toolwire_client.models.seed_scripts import SCRIPTS
from toolwire_client.run.state import RunState
from toolwire_client.store import open_store
from toolwire_client.strategies.code_mode import CodeMode
from toolwire_client.tools.code_mode.source import script_run_id
from toolwire_shared.messages import AssistantMessage, Message, ToolCall

SEARCH = ToolCall(id="call_search", name="search_tools", arguments={"query": "refunds of one order", "limit": 1})


def fan_out_then_search(messages: list[Message]) -> AssistantMessage:
    """A script over tools not loaded; then a search; then the results joined as the answer."""
    asked = sum(isinstance(m, AssistantMessage) for m in messages)
    return AssistantMessage(tool_calls=[SEARCH]) if asked == 1 else _codes(messages, [FAN_OUT] if asked == 0 else [])


SCRIPTS["code_with_search"] = fan_out_then_search


def run_code_description(tools: list[dict[str, object]]) -> str:
    [description] = [str(tool["description"]) for tool in tools if tool["name"] == "run_code"]
    return description


async def run_with_search(support_db: Path, db: str, risky: list[str] | None = None) -> RunState:
    """`--code-mode only --tool-search on` over the ledger on stdio, the scripted model above, saved in `db`."""
    server = ServerSpec(
        name="support",
        command=[TOOLWIRE, "serve", LEDGER, "--stdio"],
        env={"TOOLWIRE_SUPPORT_DB": str(support_db)},
        cwd=str(REPO),
    )
    config = RunConfig(
        model="scripted:code_with_search",
        servers=[server],
        limits=RunLimits(max_steps=6),
        code_mode=CodeMode(only=True),
        tool_search="on",
        risky_tools=risky or [],
    )
    store = await open_store(db)
    try:
        return await build_agent(config, store=store).run("total the refunds")
    finally:
        await store.aclose()


async def test_a_script_calls_tools_not_loaded_and_a_search_lists_its_finds_in_run_code(tmp_path: Path) -> None:
    support_db, db = tmp_path / "support.sqlite3", str(tmp_path / "runs.sqlite3")
    state = await run_with_search(support_db, db)
    assert state.status == "done", state.report

    code_result, search_result = (r for step in state.steps for r in step.results)
    assert not code_result.is_error, code_result.content  # the script called tools no search had loaded
    total, largest = expected_totals(support_db)
    assert json.loads(code_result.content.split("\n")[1]) == {"total_cents": total, "largest": largest}
    script = await load(db, script_run_id(state.run_id, code_result.call_id))
    assert [[c.name for c in step.tool_calls] for step in script.steps] == [["search_orders"], ["list_refunds"] * 20]
    assert not any(r.is_error for step in script.steps for r in step.results)  # run on the server, not the gate

    first = state.config["tools"]
    assert sorted(tool["name"] for tool in first) == ["run_code", "search_tools"]  # only: search_tools stays
    before = run_code_description(first)
    assert "async def" not in before and "more tools are not listed: search_tools finds them" in before
    assert state.steps[1].loaded == ["list_refunds"] and "list_refunds" in search_result.content
    offered_after = state.steps[2].tools
    assert offered_after is not None  # the search changed what the next request offers
    after = run_code_description([tool.model_dump() for tool in offered_after])
    assert "async def list_refunds(" in after and "async def search_orders(" not in after
    assert sorted(tool.name for tool in offered_after) == ["run_code", "search_tools"]  # still only run_code's


async def test_a_risky_tool_no_search_loaded_still_waits_for_a_person_when_a_script_calls_it(tmp_path: Path) -> None:
    """The tool search's gate asks no one (it runs nothing); a script's call goes to the tool itself, so its
    approval policy holds."""
    db = str(tmp_path / "runs.sqlite3")
    state = await run_with_search(tmp_path / "support.sqlite3", db, risky=["search_orders"])
    assert state.status == "waiting_for_approval", (state.status, state.report)
    script = await load(db, script_run_id(state.run_id, state.steps[0].tool_calls[0].id))
    assert [p.call.name for p in script.pending if p.waits_for_approval] == ["search_orders"]
    assert script.steps[0].results == []  # not run before a person decides
