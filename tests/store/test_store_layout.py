"""The store's layout (store/layout.py): a save appends what settled instead of rewriting the run, every way the state
changes reads back exactly, and a run saved by the layout before (a whole state in `runs.state`, schema 7) is read
as it is after the migration and split on its next save."""

import json
from dataclasses import replace
from typing import Any

import pytest

from toolwire_client.run.state import RunState, StepRecord
from toolwire_client.store import SqlRunStore, open_store
from toolwire_client.store.layout import HOLD_MESSAGES, BrokenRecord
from toolwire_client.store.schema import LATEST
from toolwire_client.store.sql import Tx
from toolwire_shared.messages import AssistantMessage, SystemMessage, ToolCall, ToolResultMessage, UserMessage
from toolwire_shared.results import ToolResult


def _state(run_id: str) -> RunState:
    return RunState(
        run_id=run_id, agent_name="a", task="t\x00nul", model="scripted", messages=[UserMessage(content="t")]
    )


def _add_step(state: RunState) -> None:
    i = len(state.steps)
    call = ToolCall(id=f"c{i}", name="echo", arguments={"text": f"step {i}\x00"})
    state.messages += [
        AssistantMessage(text=f"turn {i}", tool_calls=[call]),
        ToolResultMessage(call_id=call.id, name="echo", content=f"echoed {i}"),
    ]
    state.steps.append(StepRecord(index=i, model_text=f"turn {i}", tool_calls=[call]))


def _same(a: RunState, b: RunState) -> bool:
    return json.loads(a.model_dump_json()) == json.loads(b.model_dump_json())


async def _rows(store: SqlRunStore, run_id: str) -> tuple[int, dict[str, Any]]:
    def read(tx: Tx) -> tuple[int, Any]:
        count = tx.execute("SELECT COUNT(*) FROM run_log WHERE run_id = ?", (run_id,)).fetchone()[0]
        return int(count), tx.execute("SELECT state FROM runs WHERE run_id = ?", (run_id,)).fetchone()[0]

    count, header = await store.transaction(read)
    return count, json.loads(header) if isinstance(header, str) else header


async def test_saves_append_and_every_change_reads_back(store: SqlRunStore, db: str) -> None:
    state = _state("run_layout")
    await store.save(state)
    for _ in range(12):
        _add_step(state)
        await store.save(state)
        state.steps[-1].results.append(ToolResult(call_id=f"c{len(state.steps) - 1}", name="echo", content="x"))
        await store.save(state)  # the step in progress changed in place: the header holds it whole
    assert _same(await store.load(state.run_id), state)
    segments, header = await _rows(store, state.run_id)
    assert 0 < segments <= 4  # one per few steps, not one per item or save
    settled = header["messages"].count(0)
    assert settled >= len(state.messages) - HOLD_MESSAGES and header["messages"][:settled] == [0] * settled
    assert len(header["messages"]) == len(state.messages)
    assert isinstance(header["steps"][-1], dict) and len(header["steps"]) == 12

    state.messages[0] = SystemMessage(content="a settled message replaced")  # as the loop joins instructions
    await store.save(state)
    assert _same(await store.load(state.run_id), state)
    del state.messages[5:], state.steps[2:]  # cut back below what was settled
    _add_step(state)
    await store.save(state)
    assert _same(await store.load(state.run_id), state)
    state.steps[0].model_text = "a settled step changed in place"  # not the last settled one: a new object
    state.steps[0] = replace(state.steps[0])
    await store.save(state)
    assert _same(await store.load(state.run_id), state)

    other = await open_store(db)  # a state another store saved last: its note is not trusted, the log is rewritten
    try:
        loaded = await other.load(state.run_id)
        _add_step(loaded)
        await store.save(loaded)
        assert _same(await other.load(state.run_id), loaded)
        assert (await _rows(store, state.run_id))[0] == 1
    finally:
        await other.aclose()


async def test_a_store_of_the_layout_before_is_migrated_and_read(db: str) -> None:
    store = await open_store(db)
    state = _state("run_old")
    for _ in range(6):
        _add_step(state)
    state.version = 3

    def as_schema_7(tx: Tx) -> None:
        """What toolwire wrote before this layout: no run_log, the whole state in `runs.state`."""
        tx.execute("DROP TABLE run_log")
        tx.execute("DROP TABLE run_events")  # and what came after
        tx.execute("DELETE FROM schema_version WHERE version >= 8")
        tx.execute(
            "INSERT INTO runs (run_id, agent_name, task, status, steps, tokens, started_at, updated_at, version, state)"
            " VALUES (?, 'a', 't', 'running', 6, 0, ?, ?, 3, ?)",
            (state.run_id, state.started_at, state.updated_at, state.model_dump_json().replace("\\u0000", "")),
        )

    try:
        await store.transaction(as_schema_7)
    finally:
        await store.aclose()
    state.task = "tnul"
    for step in state.steps:
        for call in step.tool_calls:
            call.arguments["text"] = call.arguments["text"].replace("\x00", "")
    for message in state.messages:
        for call in getattr(message, "tool_calls", []):
            call.arguments["text"] = call.arguments["text"].replace("\x00", "")

    migrated = await open_store(db)
    try:
        assert await migrated.schema_version() == LATEST
        loaded = await migrated.load(state.run_id)
        assert _same(loaded, state)
        assert (await _rows(migrated, state.run_id))[0] == 0  # read as it is
        _add_step(loaded)
        await migrated.save(loaded)  # split on its next save
        segments, header = await _rows(migrated, state.run_id)
        assert segments == 1 and header["steps"][:6] == [0] * 6
        assert _same(await migrated.load(state.run_id), loaded)
    finally:
        await migrated.aclose()


async def test_a_header_naming_items_its_log_lacks_is_refused_readably(store: SqlRunStore) -> None:
    """An edited record (a placeholder where the log holds nothing, or after a whole item) is not read as a run."""
    state = _state("run_broken")
    for _ in range(3):
        _add_step(state)
    await store.save(state)
    for bad in ([0] * 20, [{"role": "user", "content": "t"}, 0]):

        def edit(tx: Tx, bad: list[Any] = bad) -> None:
            header = tx.execute("SELECT state FROM runs WHERE run_id = 'run_broken'").fetchone()[0]
            header = json.loads(header) if isinstance(header, str) else header
            header["messages"] = bad
            tx.execute("UPDATE runs SET state = ? WHERE run_id = 'run_broken'", (json.dumps(header),))

        await store.transaction(edit)
        with pytest.raises(BrokenRecord, match="run run_broken: its record names message"):
            await store.load("run_broken")
