"""toolwire's server asks questions (ctx.elicit, ctx.elicit_url) of the official SDK client, in both protocol eras,
over stdio: answers, declines and answers that do not fit reach the tool as values; a client that cannot answer
gets a readable error at once; a forged or altered request state is refused; --isolate refuses readably."""

import json
from pathlib import Path
from typing import Any, Literal

import mcp_types as types
import pytest
from mcp import Client, MCPError

from helpers.servers import stdio_params, text_of

TOOLS = "tests/elicit/elicit_tools.py:registry"
MODES: list[Literal["auto", "legacy"]] = ["auto", "legacy"]


def runs(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


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
async def test_form_url_decline_and_malformed_reach_the_tool(mode: Literal["auto", "legacy"], tmp_path: Path) -> None:
    log = tmp_path / "runs.jsonl"
    callback = answering(
        types.ElicitResult(action="accept", content={"name": "Ada", "party": 4}),
        types.ElicitResult(action="decline"),
        types.ElicitResult(action="accept", content={"name": "Ada", "party": 0}),
        types.ElicitResult(action="accept"),
    )
    params = stdio_params(TOOLS, env={"ELICIT_LOG": str(log)})
    async with Client(params, mode=mode, elicitation_callback=callback) as client:
        booked = await client.call_tool("book_table", {"restaurant": "Noma"})
        declined = await client.call_tool("book_table", {"restaurant": "Noma"})
        malformed = await client.call_tool("book_table", {"restaurant": "Noma"})
        went = await client.call_tool("connect", {"service": "bank"})
    assert text_of(booked) == "booked Noma for Ada, 4 people"
    assert text_of(declined) == "not booked: the person chose decline"
    assert "did not fit" in text_of(malformed) and "party" in text_of(malformed) and "minimum" in text_of(malformed)
    assert text_of(went) == "connected to bank"
    asked = callback.asked
    assert asked[0].message == "Who is the table at Noma for?" and asked[0].requested_schema["required"] == [
        "name",
        "party",
    ]
    assert isinstance(asked[3], types.ElicitRequestURLParams) and asked[3].url == "https://login.example.com/bank"
    # Each tool ran to its end once per call, with the answer it was given.
    assert [(r["tool"], r["action"]) for r in runs(log)] == [
        ("book_table", "accept"),
        ("book_table", "decline"),
        ("book_table", "malformed"),
        ("connect", "accept"),
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_that_cannot_answer_gets_a_readable_error(
    mode: Literal["auto", "legacy"], tmp_path: Path
) -> None:
    async with Client(stdio_params(TOOLS), mode=mode) as client:
        result = await client.call_tool("book_table", {"restaurant": "Noma"})
    assert result.is_error
    assert "cannot answer questions" in text_of(result) and "elicitation capability" in text_of(result)


async def test_a_forged_or_altered_request_state_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "runs.jsonl"
    async with Client(stdio_params(TOOLS, env={"ELICIT_LOG": str(log)}), elicitation_callback=answering()) as client:
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
        assert "sesame" not in sealed and "q1" not in sealed  # sealed: the client cannot read it

        q2 = {"q2": types.ElicitResult(action="accept", content={"b": "y"})}
        tampered = sealed[:-2] + ("A" if sealed[-2] != "A" else "B") + sealed[-1]
        for forged in (tampered, json.dumps({"q1": {"action": "accept", "content": {"a": "forged"}}})):
            with pytest.raises(MCPError) as refused:
                await call(q2, forged)
            assert refused.value.error.code == types.INVALID_PARAMS
            assert refused.value.error.message == "Invalid or expired requestState"
        done = await call(q2, sealed)
    assert isinstance(done, types.CallToolResult) and text_of(done) == "sesame then y"
    assert runs(log) == [
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
