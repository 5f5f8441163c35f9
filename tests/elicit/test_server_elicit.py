"""toolwire's server asks questions (ctx.elicit, ctx.elicit_url) of the official SDK client, in both protocol eras,
over HTTP (one server for the module) and stdio: answers, declines and answers that do not fit reach the tool as
values; a client that cannot answer gets a readable error at once; a forged or altered request state is refused;
--isolate refuses readably."""

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import httpx2
import mcp_types as types
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from helpers.servers import HttpServer, stdio_params, text_of
from toolwire_server.functions.elicit import STATE_KEY_ENV, state_security

TOOLS = "tests/elicit/elicit_tools.py:registry"
SHARED_KEY = "k" * 16 + "e" * 16 + "y" * 8
MODES: list[Literal["auto", "legacy"]] = ["auto", "legacy"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HttpServer, Path]]:
    """One HTTP server for the module's tests, and the file its tools note each run in."""
    log = tmp_path_factory.mktemp("elicit") / "runs.jsonl"
    with HttpServer(TOOLS, env={"ELICIT_LOG": str(log), STATE_KEY_ENV: SHARED_KEY}) as server:
        yield server, log


@asynccontextmanager
async def connected(url: str, mode: Literal["auto", "legacy"] = "auto", callback: Any = None) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode, elicitation_callback=callback) as client,
    ):
        yield client


def runs(log: Path, **where: Any) -> list[dict[str, Any]]:
    """The runs noted in `log` whose fields are `where`."""
    noted = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return [r for r in noted if all(r.get(k) == v for k, v in where.items())]


def answering(*answers: types.ElicitResult) -> Any:
    """An elicitation callback that gives `answers` in turn and keeps what it was asked."""
    asked: list[types.ElicitRequestParams] = []
    queue = list(answers)

    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return queue.pop(0)

    callback.asked = asked  # type: ignore[attr-defined]
    return callback


@pytest.mark.parametrize("mode", MODES)
async def test_form_url_decline_and_malformed_reach_the_tool(
    mode: Literal["auto", "legacy"], served: tuple[HttpServer, Path]
) -> None:
    server, log = served
    place = f"Noma-{mode}"
    callback = answering(
        types.ElicitResult(action="accept", content={"name": "Ada", "party": 4}),
        types.ElicitResult(action="decline"),
        types.ElicitResult(action="accept", content={"name": "Ada", "party": 0}),
        types.ElicitResult(action="accept"),
    )
    async with connected(server.url, mode, callback) as client:
        booked = await client.call_tool("book_table", {"restaurant": place})
        declined = await client.call_tool("book_table", {"restaurant": place})
        malformed = await client.call_tool("book_table", {"restaurant": place})
        went = await client.call_tool("connect", {"service": f"bank-{mode}"})
    assert text_of(booked) == f"booked {place} for Ada, 4 people"
    assert text_of(declined) == "not booked: the person chose decline"
    assert "did not fit" in text_of(malformed) and "party" in text_of(malformed) and "minimum" in text_of(malformed)
    assert text_of(went) == f"connected to bank-{mode}"
    asked = callback.asked
    assert asked[0].message == f"Who is the table at {place} for?" and asked[0].requested_schema["required"] == [
        "name",
        "party",
    ]
    assert (
        isinstance(asked[3], types.ElicitRequestURLParams) and asked[3].url == f"https://login.example.com/bank-{mode}"
    )
    # Each tool ran to its end once per call, with the answer it was given.
    assert [r["action"] for r in runs(log, restaurant=place)] == ["accept", "decline", "malformed"]
    assert [r["action"] for r in runs(log, service=f"bank-{mode}")] == ["accept"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_that_cannot_answer_gets_a_readable_error(
    mode: Literal["auto", "legacy"], served: tuple[HttpServer, Path]
) -> None:
    async with connected(served[0].url, mode) as client:
        result = await client.call_tool("book_table", {"restaurant": "Noma"})
    assert result.is_error
    assert "cannot answer questions" in text_of(result) and "elicitation capability" in text_of(result)


async def test_a_forged_or_altered_request_state_is_refused(served: tuple[HttpServer, Path]) -> None:
    server, log = served
    async with connected(server.url, callback=answering()) as client:
        session = client.session
        await client.list_tools()

        async def call(responses: Any = None, state: str | None = None) -> Any:
            return await session.call_tool(
                "two_questions", {}, input_responses=responses, request_state=state, allow_input_required=True
            )

        first = await call()
        assert isinstance(first, types.InputRequiredResult) and first.input_requests is not None
        assert list(first.input_requests) == ["q1"] and first.request_state is None
        second = await call({"q1": types.ElicitResult(action="accept", content={"a": "sesame"})})
        assert isinstance(second, types.InputRequiredResult) and second.request_state is not None
        sealed = second.request_state
        assert "sesame" not in sealed and '"q1"' not in sealed  # sealed: the client cannot read it (no JSON in it)

        q2 = {"q2": types.ElicitResult(action="accept", content={"b": "y"})}
        tampered = sealed[:-2] + ("A" if sealed[-2] != "A" else "B") + sealed[-1]
        for forged in (tampered, json.dumps({"q1": {"action": "accept", "content": {"a": "forged"}}})):
            with pytest.raises(MCPError) as refused:
                await call(q2, forged)
            assert refused.value.error.code == types.INVALID_PARAMS
            assert refused.value.error.message == "Invalid or expired requestState"
        done = await call(q2, sealed)
    assert isinstance(done, types.CallToolResult) and text_of(done) == "sesame then y"
    assert runs(log, tool="two_questions") == [
        {
            "tool": "two_questions",
            "first": {"action": "accept", "content": {"a": "sesame"}, "problem": None},
            "second": {"action": "accept", "content": {"b": "y"}, "problem": None},
        }
    ]


async def test_an_isolated_tool_is_refused_readably() -> None:
    callback = answering(types.ElicitResult(action="accept", content={"name": "Ada", "party": 2}))
    async with Client(stdio_params(TOOLS, "--isolate"), elicitation_callback=callback) as client:
        result = await client.call_tool("book_table", {"restaurant": "Noma"})
    assert result.is_error and "worker process" in text_of(result) and "--isolate" in text_of(result)
    assert callback.asked == []


async def test_a_state_sealed_with_the_shared_key_is_taken_by_another_server(served: tuple[HttpServer, Path]) -> None:
    """A server restarted (or a replica) with the same TOOLWIRE_STATE_KEY finishes a call another one began; the
    key is the operator's, never the client's."""
    first = types.ElicitResult(action="accept", content={"a": "from-a"})
    async with connected(served[0].url, callback=answering()) as client:
        await client.list_tools()
        begun = await client.session.call_tool(
            "two_questions", {}, input_responses={"q1": first}, allow_input_required=True
        )
    assert isinstance(begun, types.InputRequiredResult) and begun.request_state is not None
    with HttpServer(TOOLS, env={STATE_KEY_ENV: SHARED_KEY}) as other:
        async with connected(other.url, callback=answering()) as client:
            await client.list_tools()
            done = await client.session.call_tool(
                "two_questions",
                {},
                input_responses={"q2": types.ElicitResult(action="accept", content={"b": "from-b"})},
                request_state=begun.request_state,
                allow_input_required=True,
            )
    assert isinstance(done, types.CallToolResult) and text_of(done) == "from-a then from-b"


def test_a_short_state_key_is_refused_readably(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(STATE_KEY_ENV, "short")
    with pytest.raises(ValueError, match="TOOLWIRE_STATE_KEY: request-state keys must be at least 32 bytes"):
        state_security()
