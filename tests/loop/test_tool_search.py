"""Tool search (deferred loading): a real tool server of 40 tools (bench/tool_catalog.py) over stdio, the loop, and
the providers' request bodies as the loopback provider servers recorded them (OpenAI Chat and Responses; Anthropic's
native tool search tool). The model is first offered only `search_tools` (and the kept tools); what a search finds
is offered in full from the next request on."""

import json
import sys
from pathlib import Path
from typing import Any

from context.wire import ANTHROPIC, OPENAI, RESPONSES, run_scripted
from helpers.cli import clean_env, run_toolwire
from helpers.fake_providers import FakeProvider, RecordedRequest, Reply, anthropic_message
from loop.conftest import REPO
from toolwire_client.mistakes import WAITING
from toolwire_client.replay import replay
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.tool_search import ToolSearch
from toolwire_client.tools.toolbox import ToolBox

CATALOG = str(REPO / "bench" / "tool_catalog.py")
INVOICE = {"amount_cents": "1200", "currency": "EUR"}


def catalog(count: int = 40) -> McpSource:
    return McpSource("catalog", command=[sys.executable, CATALOG, str(count)], cwd=str(REPO))


def chat_tools(body: dict[str, Any]) -> list[str]:
    return sorted(tool["function"]["name"] for tool in body.get("tools", []))


def responses_tools(body: dict[str, Any]) -> list[str]:
    return sorted(tool["name"] for tool in body.get("tools", []))


async def test_openai_chat_search_then_call_what_it_found() -> None:
    script = [
        OPENAI.reply(calls=[("c1", "search_tools", {"query": "create an invoice in billing"})]),
        OPENAI.reply(calls=[("c2", "billing_create_invoice", INVOICE)]),
        OPENAI.reply("Invoice created."),
    ]
    box = ToolBox([catalog()], layers=[ToolSearch("auto")])
    state, requests = await run_scripted(OPENAI, box, "Bill 12 EUR", script)
    assert state.status == "done", state.report
    first, second, third = (request.body for request in requests)
    assert chat_tools(first) == ["search_tools"]  # 40 tools: auto turns it on
    found = state.steps[0].results[0].content
    assert "billing_create_invoice: Create a new invoice in the billing system." in found, found
    assert "billing_create_invoice" in chat_tools(second) and "search_tools" in chat_tools(second)
    assert len(chat_tools(second)) == 6  # the five found, and the search
    offered = next(t for t in second["tools"] if t["function"]["name"] == "billing_create_invoice")
    assert offered["function"]["parameters"]["properties"]["amount_cents"]["description"] == "Total in cents"
    assert chat_tools(third) == chat_tools(second)
    assert state.steps[1].results[0].content == f"billing_create_invoice done: {json.dumps(INVOICE, sort_keys=True)}"
    assert state.steps[0].loaded is not None and "billing_create_invoice" in state.steps[0].loaded
    assert state.steps[0].tools is None and state.steps[1].tools is not None  # what step 2 was offered, recorded


async def test_openai_responses_a_tool_called_before_it_is_loaded_is_loaded_and_called_again() -> None:
    script = [
        RESPONSES.reply(calls=[("call_1", "crm_get_contact", {"contact_id": "c7"})]),
        RESPONSES.reply(calls=[("call_2", "crm_get_contact", {"contact_id": "c7"})]),
        RESPONSES.reply(calls=[("call_3", "crm_frobnicate", {})]),
        RESPONSES.reply("Contact c7 found."),
    ]
    box = ToolBox([catalog()], layers=[ToolSearch("on", keep=["crm_create_*"])])
    state, requests = await run_scripted(RESPONSES, box, "Look up contact c7", script)
    assert state.status == "done", state.report
    bodies = [request.body for request in requests]
    assert responses_tools(bodies[0]) == ["crm_create_contact", "search_tools"]  # the kept tool and the search
    early = state.steps[0].results[0]
    assert (
        not early.is_error and "was not loaded, so it did not run" in early.content and "Call it again" in early.content
    )
    assert '"contact_id": {"type": "string"' in early.content  # its definition
    assert "crm_get_contact" in responses_tools(bodies[1])
    assert state.steps[1].results[0].content == 'crm_get_contact done: {"contact_id": "c7"}'
    unknown = state.steps[2].results[0]
    assert unknown.error_kind == "unknown_tool" and "crm_frobnicate" in unknown.content
    assert [step.loaded for step in state.steps] == [["crm_get_contact"]] * 4
    replayed = await replay(state)  # the early call is answered from the record, as it was
    assert replayed.identical, replayed.difference


async def test_anthropic_native_tool_search_defers_the_tools_and_records_what_it_loaded() -> None:
    search_blocks = [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25", "input": {"query": "invoice"}},
        {
            "type": "tool_search_tool_result",
            "tool_use_id": "srvtoolu_1",
            "content": {
                "type": "tool_search_tool_search_result",
                "tool_references": [{"type": "tool_reference", "tool_name": "billing_create_invoice"}],
            },
        },
    ]
    script = [
        anthropic_message("", [("toolu_1", "billing_create_invoice", INVOICE)], extra_blocks=search_blocks),
        anthropic_message("Invoice created."),
    ]
    box = ToolBox([catalog()], layers=[ToolSearch("on", keep=["crm_get_contact"], native=True)])
    state, (first, second) = await run_scripted(ANTHROPIC, box, "Bill 12 EUR", script)
    assert state.status == "done", state.report
    tools = first.body["tools"]
    assert tools[-1] == {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25", **_cached(tools)}
    deferred = [tool["name"] for tool in tools if tool.get("defer_loading")]
    assert len(deferred) == 39 and "crm_get_contact" not in deferred and "search_tools" not in deferred
    assert first.headers["anthropic-beta"] == "advanced-tool-use-2025-11-20"
    echoed = second.body["messages"][1]["content"]  # the assistant turn, the search's blocks echoed unchanged
    assert [block["type"] for block in echoed] == ["server_tool_use", "tool_search_tool_result", "tool_use"]
    assert state.steps[0].loaded == ["billing_create_invoice"]
    assert second.body["tools"] == tools  # the provider loads what it found from the references: same tools, cached
    assert state.steps[0].tools is None
    assert state.steps[0].results[0].content.startswith("billing_create_invoice done:")


def _cached(tools: list[dict[str, Any]]) -> dict[str, Any]:
    return {"cache_control": tools[-1]["cache_control"]} if "cache_control" in tools[-1] else {}


async def test_a_search_never_shows_a_tool_the_run_may_not_call() -> None:
    script = [
        OPENAI.reply(calls=[("c1", "search_tools", {"query": "billing_create_invoice"})]),
        OPENAI.reply(calls=[("c2", "search_tools", {"query": "invoice billing system"})]),
        OPENAI.reply(calls=[("c3", "billing_create_invoice", {})]),
        OPENAI.reply("No billing tool."),
    ]
    box = ToolBox([catalog()], allow=["crm_*"], layers=[ToolSearch("on")])
    state, requests = await run_scripted(OPENAI, box, "Bill 12 EUR", script)
    by_name, by_words, called = (step.results[0] for step in state.steps[:3])
    found = [line for result in (by_name, by_words) for line in result.content.splitlines() if line.startswith("- ")]
    assert found and not any("billing" in line for line in found), found  # only the crm_* tools it may call
    assert called.error_kind == "unknown_tool"
    assert not any("billing" in name for request in requests for name in chat_tools(request.body))


async def test_auto_offers_every_tool_of_a_small_run() -> None:
    box = ToolBox([catalog(10)], layers=[ToolSearch("auto")])
    state, requests = await run_scripted(OPENAI, box, "Hello", [OPENAI.reply("Nothing to do.")])
    assert len(chat_tools(requests[0].body)) == 10 and state.steps[0].loaded is None


def test_a_run_paused_for_approval_resumes_in_a_new_process_with_the_same_loaded_tools(tmp_path: Path) -> None:
    """`toolwire run --tool-search on` pauses at a risky tool a search found; `toolwire resume` (another process)
    offers the model the same tools as before the pause, and `toolwire replay` finds the run identical."""
    env, db = clean_env(), str(tmp_path / "runs.db")
    server = f"{sys.executable} {CATALOG} 40"
    with FakeProvider(searching_model) as fake:
        model = ("--model", "openai:gpt-fake", "--base-url", fake.openai_url)
        flags = ("--tool-search", "on", "--keep-tool", "wiki_*", "--risky", "crm_get_contact", "--db", db)
        paused = run_toolwire("run", "Look up contact c7", *model, "--server", server, *flags, "--json", env=env)
        assert paused.returncode == WAITING, paused.stdout + paused.stderr
        state = json.loads(paused.stdout)
        assert [step["loaded"] for step in state["steps"]] == [FOUND, FOUND]
        assert run_toolwire("approve", state["run_id"], "--db", db, env=env).returncode == 0
        resumed = run_toolwire("resume", state["run_id"], "--db", db, env=env)
        assert resumed.returncode == 0 and "c7 is Ada" in resumed.stdout, resumed.stdout + resumed.stderr
    first, before, after = (chat_tools(request.body) for request in fake.requests)
    assert first == ["search_tools", "wiki_create_page", "wiki_get_page"]
    assert after == before == sorted([*first, *FOUND])
    replayed = run_toolwire("replay", state["run_id"], "--db", db, env=env)
    assert replayed.returncode == 0 and "identical" in replayed.stdout, replayed.stdout + replayed.stderr


FOUND = ["crm_get_contact", "crm_create_contact"]


def searching_model(request: RecordedRequest) -> Reply:
    """Searches, calls the contact lookup it found, then answers from its result."""
    results = [m["content"] for m in request.body["messages"] if m["role"] == "tool"]
    if not results:
        return OPENAI.reply(calls=[("c1", "search_tools", {"query": "get a CRM contact", "limit": 2})])
    if len(results) == 1:
        return OPENAI.reply(calls=[("c2", "crm_get_contact", {"contact_id": "c7"})])
    return OPENAI.reply(f"c7 is Ada ({results[-1]})")


async def test_a_risky_tool_called_before_it_is_loaded_is_loaded_unasked_and_waits_when_called_again() -> None:
    script = [
        OPENAI.reply(calls=[("c1", "crm_get_contact", {"contact_id": "c7"})]),
        OPENAI.reply(calls=[("c2", "crm_get_contact", {"contact_id": "c7"})]),
    ]
    box = ToolBox([catalog()], layers=[ToolSearch("on")])
    state, _ = await run_scripted(OPENAI, box, "Look up contact c7", script, risky_tools={"crm_get_contact"})
    assert "was not loaded, so it did not run" in state.steps[0].results[0].content  # loading it ran nothing
    assert state.status == "waiting_for_approval" and [p.call.id for p in state.pending] == ["c2"]


async def test_a_new_run_on_a_used_toolbox_starts_with_nothing_loaded() -> None:
    """What one run's search loaded is that run's: the next run on the same ToolBox (an Agent that runs one task
    after another) is offered only the search and the kept tools again, and records nothing loaded."""
    first = [
        OPENAI.reply(calls=[("c1", "search_tools", {"query": "create an invoice in billing"})]),
        OPENAI.reply(calls=[("c2", "billing_create_invoice", INVOICE)]),
        OPENAI.reply("Invoice created."),
    ]
    box = ToolBox([catalog()], layers=[ToolSearch("on")])
    async with box:
        done, _ = await run_scripted(OPENAI, box, "Bill 12 EUR", first)
        assert "billing_create_invoice" in (done.steps[-1].loaded or []), done.report
        again, (request,) = await run_scripted(OPENAI, box, "Say hello", [OPENAI.reply("Hello.")])
    assert chat_tools(request.body) == ["search_tools"]
    assert again.steps[0].loaded == []
    resumed = await replay(again)
    assert resumed.identical, resumed.difference
