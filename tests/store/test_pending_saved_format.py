"""A run saved with a pending call in every state (data/run_pending_every_state.json, written by the code before
the pending-call machine, run/pending.py) loads, and saves back byte-identical: as JSON, and through the store."""

import json
from pathlib import Path

from toolwire_client.run.pending import CALL_STATES
from toolwire_client.run.state import RunState
from toolwire_client.store import SqlRunStore

SAVED = (Path(__file__).parent / "data" / "run_pending_every_state.json").read_text(encoding="utf-8")


def test_every_state_is_in_the_saved_run() -> None:
    assert sorted(p.state for p in RunState.model_validate_json(SAVED).pending) == sorted(CALL_STATES)


def test_a_saved_run_with_a_pending_call_in_every_state_loads_and_saves_back_byte_identical() -> None:
    assert RunState.model_validate_json(SAVED).model_dump_json() == SAVED


async def test_it_reads_back_from_the_store_as_saved(store: SqlRunStore, db: str) -> None:
    """Byte-identical on SQLite; on PostgreSQL the same JSON (its jsonb orders the keys of a tool's free-form dicts,
    the arguments and a question's schema, as it did before)."""
    same = _same_bytes if not db.startswith("postgres") else _same_json
    state = RunState.model_validate_json(SAVED)
    state.version = 0  # a new run of the store's: saved as version 1
    await store.save(state)
    loaded = await store.load(state.run_id)
    assert same(loaded.model_dump_json(), _stamped(loaded))
    await store.save(loaded)  # saved back as loaded: the next version, nothing else changed
    reloaded = await store.load(state.run_id)
    assert same(reloaded.model_dump_json(), _stamped(reloaded))


def _stamped(saved: RunState) -> str:
    """The saved run as the store stamps a save of it: its version and when."""
    return (
        RunState.model_validate_json(SAVED)
        .model_copy(update={"version": saved.version, "updated_at": saved.updated_at})
        .model_dump_json()
    )


def _same_bytes(a: str, b: str) -> bool:
    return a == b


def _same_json(a: str, b: str) -> bool:
    return bool(json.loads(a) == json.loads(b))
