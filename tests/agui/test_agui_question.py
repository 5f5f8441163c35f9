"""A tool's question to a person (MCP elicitation) as an AG-UI interrupt: the stream ends with an `input` interrupt
carrying the question and its schema; the front end's resume is the answer, recorded as `toolwire answer` records it
(under the person's name, checked against the schema: a misfit is refused and records nothing), and the call is sent
again with it."""

from pathlib import Path

import anyio
import httpx2
from agui_procs import agent_server, people_file, run_input, stream

from helpers.cli import TOOLWIRE
from helpers.fake_providers import FakeProvider, RecordedRequest, Reply, anthropic_message
from toolwire_client.store import open_store
from toolwire_client.store.answers import recent_answers

ALICE = "tok-alice-0123456789"
THREAD = "thread-book"
ELICIT = f"{TOOLWIRE} serve tests/elicit/elicit_tools.py:registry --stdio"
BOOKED = "booked Nopa for Ada, 2 people"


def model(request: RecordedRequest) -> Reply:
    """Book a table; once the tool's result is in, say what it said."""
    results = [
        block["content"]
        for m in request.body["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for block in m["content"]
        if block.get("type") == "tool_result"
    ]
    if not results:
        return anthropic_message("", [("toolu_book", "book_table", {"restaurant": "Nopa"})])
    said = results[0] if isinstance(results[0], str) else results[0][0]["text"]
    return anthropic_message(f"Done: {said}")


def answers(folder: Path) -> list[tuple[str, str | None, str | None]]:
    async def read() -> list[tuple[str, str | None, str | None]]:
        store = await open_store(str(folder / "runs.db"))
        try:
            return [(a["action"], a["content"], a["by"]) for a in await recent_answers(store) if a["run_id"] == THREAD]
        finally:
            await store.aclose()

    return anyio.run(read)


def test_a_question_is_an_interrupt_the_resume_answers(tmp_path: Path) -> None:
    tokens = people_file(tmp_path, {"alice": (ALICE, ["*"])})
    with (
        FakeProvider(responder=model) as fake,
        agent_server(tmp_path, fake.anthropic_url, "--tokens", str(tokens), server=ELICIT) as url,
        httpx2.Client(timeout=60) as client,
    ):
        with stream(client, url, run_input(THREAD, "leg-1", "Book Nopa"), ALICE) as first:
            end = first.to_end()[-1]
        assert end.type.value == "RUN_FINISHED" and end.outcome.type == "interrupt"
        (asked,) = end.outcome.interrupts
        assert (asked.reason, asked.tool_call_id) == ("input", "toolu_book")
        assert asked.message == "Who is the table at Nopa for?"
        assert asked.response_schema["required"] == ["name", "party"]

        misfit = [{"interruptId": asked.id, "status": "resolved", "payload": {"name": "Ada", "party": "two"}}]
        auth = {"authorization": f"Bearer {ALICE}"}
        refused = client.post(url, json=run_input(THREAD, "x", resume=misfit), headers=auth)
        assert refused.status_code == 400 and "what fits" in refused.json()["error"]
        assert answers(tmp_path) == []

        resume = [{"interruptId": asked.id, "status": "resolved", "payload": {"name": "Ada", "party": 2}}]
        with stream(client, url, run_input(THREAD, "leg-2", resume=resume), ALICE) as second:
            resumed = second.to_end()
    assert answers(tmp_path) == [("accept", '{"name": "Ada", "party": 2}', "alice")]
    results = [e.content for e in resumed if e.type.value == "TOOL_CALL_RESULT"]
    assert results == [BOOKED]
    assert resumed[-1].outcome.type == "success" and resumed[-1].result["answer"] == f"Done: {BOOKED}"
