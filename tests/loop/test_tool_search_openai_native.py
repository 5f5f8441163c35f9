"""Tool search natively on the OpenAI Responses API (OpenAI's hosted `tool_search`, gpt-5.4 and later): a real tool
server of 40 tools (bench/tool_catalog.py) over stdio, the agent as `RunConfig` / `toolwire run` build it, and a
loopback Responses server that records the request bodies and searches as OpenAI does, inside the response: a
`tool_search_call` item, a `tool_search_output` item with the definitions it loaded, then the call of what it found.
"""

import json
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from helpers.cli import TOOLWIRE, clean_env, run_toolwire
from helpers.fake_providers import (
    FakeProvider,
    RecordedRequest,
    Reply,
    Responder,
    responses_call,
    responses_message,
    responses_reply,
    responses_stream,
)
from helpers.polling import await_until
from loop.conftest import REPO
from loop.test_tool_search import CATALOG, INVOICE
from store.procs import load
from toolwire_client.assembly.agents import build_agent
from toolwire_client.config import RunConfig, ServerSpec
from toolwire_client.models.openai_responses import OpenAIResponsesModel
from toolwire_client.replay import replay

FOUND = "billing_create_invoice"
KEPT = "crm_get_contact"
CREATED_BY = "created_by"
"""An output-only field of the search items (its values are not documented): never sent back."""


def search_items(body: dict[str, Any]) -> list[dict[str, Any]]:
    """What OpenAI's hosted search puts in a response: the search, and what it loaded (the definition it was sent,
    without `defer_loading`)."""
    offered = next(tool for tool in body["tools"] if tool.get("name") == FOUND)
    loaded = {key: value for key, value in offered.items() if key != "defer_loading"}
    common = {"execution": "server", "status": "completed", "call_id": None, CREATED_BY: "user_fake"}
    return [
        {"type": "tool_search_call", "id": "tsc_1", "arguments": {"query": "create an invoice"}, **common},
        {"type": "tool_search_output", "id": "tso_1", "tools": [loaded], **common},
    ]


def results_of(body: dict[str, Any]) -> list[str]:
    return [item["output"] for item in body["input"] if item.get("type") == "function_call_output"]


def hosted_search(stream: bool = False, hold: threading.Event | None = None) -> Responder:
    """Searches and calls what it found; answers from the result. `hold`: the first request that carries a result
    waits for it (a model call in flight when the run is killed)."""
    held: list[bool] = []

    def answer(request: RecordedRequest) -> Reply:
        results = results_of(request.body)
        if {"type": "tool_search"} not in request.body.get("tools", []):
            said = "fake provider: the request offers no hosted tool_search"
            return Reply(status=400, body={"error": {"type": "invalid_request_error", "message": said}})
        if not results:
            reply = responses_reply([*search_items(request.body), responses_call("call_1", FOUND, json.dumps(INVOICE))])
        else:
            if hold is not None and not held:
                held.append(True)
                hold.wait(60)
            reply = responses_reply([responses_message(f"Invoice created: {results[-1]}")])
        return responses_stream(reply) if stream else reply

    return answer


def catalog_server() -> ServerSpec:
    return ServerSpec(name="catalog", command=[sys.executable, CATALOG, "40"], cwd=str(REPO))


def searching(fake: FakeProvider, model: str, stream: bool = False) -> RunConfig:
    """A run of the 40-tool catalog with tool search on, `KEPT` always offered, on `model` of the loopback server."""
    url = fake.openai_url
    return RunConfig(
        model=model, base_url=url, servers=[catalog_server()], tool_search="on", keep_tools=[KEPT], stream=stream
    )


def tool_names(body: dict[str, Any]) -> list[str]:
    return [tool.get("name") or tool["type"] for tool in body["tools"]]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_hosted_tool_search_defers_the_tools_and_records_what_it_loaded(stream: bool) -> None:
    with FakeProvider(hosted_search(stream)) as fake:
        state = await build_agent(searching(fake, "openai-responses:gpt-5.4", stream)).run("Bill 12 EUR")
    assert state.status == "done", state.report
    first, second = (request.body for request in fake.requests)
    tools = first["tools"]
    assert tools[-1] == {"type": "tool_search"}  # the hosted search, not toolwire's own search_tools
    deferred = [tool["name"] for tool in tools if tool.get("defer_loading") is True]
    assert len(deferred) == 39 and KEPT not in deferred and "search_tools" not in tool_names(first)
    assert next(tool for tool in tools if tool.get("name") == KEPT).get("defer_loading") is None
    assert second["tools"] == tools  # the provider loads what it found from the history: the same tools, cached

    echoed = [item for item in second["input"] if item.get("type") in ("tool_search_call", "tool_search_output")]
    expected = [{k: v for k, v in item.items() if k != CREATED_BY} for item in search_items(first)]
    assert echoed == expected  # sent back as the API takes them: whole, without the output-only created_by
    kinds = [item.get("type") for item in second["input"]]
    assert kinds[1:] == ["tool_search_call", "tool_search_output", "function_call", "function_call_output"]

    assert [step.loaded for step in state.steps] == [[FOUND], [FOUND]]  # recorded when it was loaded
    assert state.steps[0].model_reply is not None and state.steps[0].model_reply.found_tools == [FOUND]
    assert state.steps[0].tools is None  # the offer did not change
    assert results_of(second) == [f"{FOUND} done: {json.dumps(INVOICE, sort_keys=True)}"]  # the real tool ran
    replayed = await replay(state)
    assert replayed.identical, replayed.difference


async def test_a_responses_model_without_tool_search_keeps_toolwires_own_search() -> None:
    """gpt-4.1 has no hosted tool search: the client-side search_tools is offered, nothing deferred."""
    with FakeProvider() as fake:
        fake.push(responses_reply([responses_message("Nothing to do.")]))
        state = await build_agent(searching(fake, "openai-responses:gpt-4.1-mini")).run("Hello")
    assert state.status == "done", state.report
    body = fake.requests[0].body
    assert sorted(tool_names(body)) == [KEPT, "search_tools"]
    assert not any("defer_loading" in tool for tool in body["tools"])


def run_ids(db: str) -> list[str]:
    if not Path(db).exists():
        return []
    conn = sqlite3.connect(db)
    try:
        return [row[0] for row in conn.execute("SELECT run_id FROM runs")]
    except sqlite3.OperationalError:  # the store not made yet
        return []
    finally:
        conn.close()


def start(argv: list[str], env: dict[str, str]) -> "subprocess.Popen[str]":
    return subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


async def test_a_run_killed_after_a_hosted_search_resumes_with_the_same_tools_and_replays_identical(
    tmp_path: Path,
) -> None:
    """`toolwire run --tool-search on` on gpt-5.4 is killed -9 while its second model call is in flight; `toolwire
    resume` (another process) sends the same tools and the search's items again, and `replay` finds it identical."""
    env, db = clean_env(), str(tmp_path / "runs.db")
    hold = threading.Event()
    with FakeProvider(hosted_search(hold=hold)) as fake:
        argv = [TOOLWIRE, "run", "Bill 12 EUR", "--model", "openai-responses:gpt-5.4", "--base-url", fake.openai_url]
        argv += ["--server", f"{sys.executable} {CATALOG} 40", "--tool-search", "on", "--keep-tool", KEPT, "--db", db]
        proc = start(argv, env)
        try:
            await await_until(lambda: len(fake.requests) >= 2, "the second model call", proc=proc)
        finally:
            proc.kill()
            proc.communicate(timeout=60)
            hold.set()
        [run_id] = run_ids(db)
        resumed = await anyio.to_thread.run_sync(lambda: run_toolwire("resume", run_id, "--db", db, env=env))
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    first, killed, again = (request.body for request in fake.requests)
    assert again["tools"] == killed["tools"] == first["tools"] and first["tools"][-1] == {"type": "tool_search"}
    assert again["input"] == killed["input"]  # the search's items sent again, as before the kill
    assert [item.get("type") for item in again["input"]][1:3] == ["tool_search_call", "tool_search_output"]
    state = await load(db, run_id)
    assert state.status == "done" and "Invoice created" in (state.final_answer or ""), state.report
    assert [step.loaded for step in state.steps] == [[FOUND], [FOUND]]
    replayed = run_toolwire("replay", run_id, "--db", db, env=env)
    assert replayed.returncode == 0 and "identical" in replayed.stdout, replayed.stdout + replayed.stderr


@pytest.mark.parametrize(
    ("model", "native"),
    [
        ("gpt-5.4", True),
        ("gpt-5.4-mini", True),
        ("gpt-5.5-2026-04-23", True),
        ("gpt-6", True),
        ("ft:gpt-5.4-mini:acme::abc123", True),
        ("gpt-5", False),
        ("gpt-5.1", False),
        ("gpt-5-mini", False),
        ("gpt-4.1-mini", False),
        ("o3", False),
    ],
)
def test_only_gpt_5_4_and_later_search_natively(model: str, native: bool) -> None:
    assert OpenAIResponsesModel(model, api_key="sk-test").native_tool_search is native
