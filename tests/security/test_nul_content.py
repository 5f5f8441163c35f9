"""Hole 9: text a store cannot hold as it is must not strand a run. PostgreSQL's JSONB and TEXT refuse U+0000, which
a model's tool arguments or a tool's result can hold: the run goes on, ends done, and its saved state reads back
exactly (through the store's escaping, the same on SQLite), so resume and replay work. A save the database refuses
for another reason ends the run `failed` (`save_failed`, saying why) instead of leaving it `running`."""

import json
import logging
import sqlite3
from typing import Any

import pytest

from toolwire_client.config import RunLimits
from toolwire_client.loop import Agent
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.replay import replay
from toolwire_client.store import SqlRunStore
from toolwire_client.store.approvals import approve
from toolwire_client.tools.registry_source import RegistrySource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_server import Registry
from toolwire_shared.messages import AssistantMessage, Message, ToolCall, ToolResultMessage

TRICKY = "a\x00b \ue000 \ue000e \ue0000 \\u0000 \x00\x00 end"
"""NUL, the store's escape character alone and before each of its codes, and JSON's spelling of NUL as text."""
REFUND_ID = "refund\x00\ue000e"

registry = Registry("nul-tests")
ran: list[str] = []


@registry.tool(description="Echo the text back, with NUL around it.", idempotent=True)
def shout(text: str) -> str:
    ran.append("shout")
    return f"\x00{text}\x00"


@registry.tool(description="Refund, with a note (risky: a person approves it).")
def refund(note: str) -> str:
    ran.append("refund")
    return f"refunded: {note}"


def nul_script(messages: list[Message]) -> AssistantMessage:
    """shout(TRICKY); refund(what shout said), under a call id with NUL; then an answer with NUL in it."""
    results = [m for m in messages if isinstance(m, ToolResultMessage)]
    if not results:
        return AssistantMessage(tool_calls=[ToolCall(id="shout\x00", name="shout", arguments={"text": TRICKY})])
    if len(results) == 1:
        note = results[0].content
        return AssistantMessage(tool_calls=[ToolCall(id=REFUND_ID, name="refund", arguments={"note": note})])
    return AssistantMessage(text=f"done\x00{results[-1].content}")


def agent(store: SqlRunStore, model: ScriptedModel) -> Agent:
    box = ToolBox([RegistrySource(registry, name="nul")])
    return Agent.of(model, box, store=store, risky_tools={"refund"}, limits=RunLimits(max_steps=5))


async def test_nul_in_arguments_and_results_is_saved_exactly_and_the_run_resumes_and_replays(
    store: SqlRunStore,
) -> None:
    ran.clear()
    waiting = await agent(store, ScriptedModel(nul_script)).run(f"Refund\x00 {TRICKY}")
    assert (waiting.status, ran) == ("waiting_for_approval", ["shout"]), waiting.report
    [pending] = (await store.load(waiting.run_id)).pending
    assert pending.call.id == REFUND_ID and pending.call.arguments == {"note": f"\x00{TRICKY}\x00"}

    decided = await approve(store, waiting.run_id)
    assert decided.call.id == REFUND_ID
    done = await agent(store, ScriptedModel(nul_script)).resume(waiting.run_id)
    assert (done.status, done.stop_reason, ran) == ("done", "final_answer", ["shout", "refund"]), done.report
    assert done.final_answer == f"done\x00refunded: \x00{TRICKY}\x00"

    saved = await store.load(done.run_id)
    assert saved.task == f"Refund\x00 {TRICKY}"
    assert saved.messages == done.messages and saved.final_answer == done.final_answer
    assert [r.content for s in saved.steps for r in s.results] == [r.content for s in done.steps for r in s.results]
    assert [s.model_reply for s in saved.steps] == [s.model_reply for s in done.steps]
    [summary] = await store.list_runs()
    assert summary.task == saved.task and await store.tampered() == []
    replayed = await replay(saved)
    assert replayed.identical, replayed.describe()


def refuse_second_step(db: str) -> None:
    """The database itself refuses any run past one step from now on (a real constraint, as a quota would be)."""
    if db.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(db, autocommit=True) as conn:
            conn.execute("ALTER TABLE runs ADD CONSTRAINT one_step_only CHECK (steps < 2) NOT VALID")
        return
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute(
            "CREATE TRIGGER one_step_only BEFORE UPDATE ON runs WHEN NEW.steps >= 2"
            " BEGIN SELECT RAISE(ABORT, 'one_step_only'); END"
        )
    finally:
        conn.close()


async def test_a_save_the_database_refuses_ends_the_run_failed_and_says_why(
    store: SqlRunStore, db: str, caplog: pytest.LogCaptureFixture
) -> None:
    ran.clear()

    def script(messages: list[Message]) -> AssistantMessage:
        turn = sum(isinstance(m, AssistantMessage) for m in messages)
        if turn == 1:
            refuse_second_step(db)
        return AssistantMessage(tool_calls=[ToolCall(id=f"c{turn}", name="shout", arguments={"text": str(turn)})])

    with caplog.at_level(logging.ERROR, logger="toolwire.client.loop"):
        ended = await agent(store, ScriptedModel(script)).run("Shout twice")
    assert (ended.status, ended.stop_reason) == ("failed", "save_failed"), ended.report
    assert ran == ["shout"]  # the second step's call was never sent: its `sent` mark could not be saved
    saved = await store.load(ended.run_id)
    assert (saved.status, saved.stop_reason, len(saved.steps)) == ("failed", "save_failed", 1)
    said: Any = saved.report
    assert said.startswith("stopped after 2 steps: the run store refused to save run ") and "one_step_only" in said
    assert [s.status for s in await store.list_runs()] == ["failed"]
    assert "only its end was saved" in caplog.text


def test_the_escaping_round_trips_every_string_of_its_own_characters() -> None:
    from itertools import product

    from toolwire_client.store.text_codec import ESCAPE, escape, escape_document, unescape, unescape_document

    alphabet = ["a", "\x00", ESCAPE, "e", "0", "\\"]
    for size in range(5):
        for chars in product(alphabet, repeat=size):
            text = "".join(chars)
            assert "\x00" not in escape(text) and unescape(escape(text)) == text, repr(text)
    document = {"k\x00": [TRICKY, {"x": ESCAPE + "0"}], "n": 1}

    stored = escape_document(json.dumps(document))
    assert "\x00" not in "".join(strings(json.loads(stored))) and unescape_document(json.loads(stored)) == document
    assert escape_document('{"plain": "text"}') == '{"plain": "text"}'  # nothing to escape: stored as it is


def strings(value: Any) -> list[str]:
    """Every string of a JSON value, keys too."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [*value, *(s for v in value.values() for s in strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []
