"""A run as rows: its `runs` row (the header of its state and indexed columns) and its log of what settled since
(store/layout.py), read and written inside a transaction of the kit (toolwire_shared.persistence)."""

from datetime import datetime
from typing import Any

from toolwire_client.run.state import RunState
from toolwire_client.store import layout
from toolwire_client.store.text_codec import escape_document, unescape_document
from toolwire_shared.persistence import Tx


class RunNotFound(KeyError):
    """No run with this id in the store."""

    def __str__(self) -> str:
        return f"no run '{self.args[0]}' in this store; `toolwire runs` lists the runs it holds"


def read(tx: Tx, token: object, run_id: str, lock: bool = False) -> tuple[RunState, str | None]:
    """The run's whole state (its header joined with its log) and who holds its lease; with `lock`, its row is held
    for this transaction. `token` is the store's: whose note the state carries (layout.Written)."""
    row = tx.execute(
        f"SELECT state, version, claimed_by FROM runs WHERE run_id = ?{tx.dialect.for_update if lock else ''}",
        (run_id,),
    ).fetchone()
    if row is None:
        raise RunNotFound(run_id)
    json_value = tx.dialect.json_value
    header = unescape_document(json_value(row[0]))
    segments = tx.execute("SELECT body FROM run_log WHERE run_id = ? ORDER BY seq", (run_id,)).fetchall()
    document, messages, steps = layout.join(run_id, header, [unescape_document(json_value(s[0])) for s in segments])
    state = RunState.model_validate(document)
    state.version = int(row[1])
    layout.note_loaded(state, token, messages, steps)
    return state, row[2]


def header(tx: Tx, parts: layout.Split) -> Any:
    """The `state` column's value: its strings escaped where they hold what a store cannot."""
    return tx.json(escape_document(parts.header))


def append_log(tx: Tx, run_id: str, parts: layout.Split, seq: int) -> None:
    """What settled since the last save, one row (after the run's own row: the log references it)."""
    if parts.segment is None:
        return
    if parts.replaces_log:
        tx.execute("DELETE FROM run_log WHERE run_id = ?", (run_id,))
    tx.execute(
        "INSERT INTO run_log (run_id, seq, body) VALUES (?, ?, ?)",
        (run_id, seq, tx.json(escape_document(parts.segment))),
    )


def rewrite(tx: Tx, token: object, state: RunState, version: int, stamp: datetime) -> None:
    """Write `state` (read at `version` in this transaction, its row held) back as the next version."""
    parts = layout.split(state, token, version + 1, stamp)
    tx.execute(
        "UPDATE runs SET state = ?, version = ?, updated_at = ? WHERE run_id = ? AND version = ?",
        (header(tx, parts), version + 1, tx.timestamp(stamp), state.run_id, version),
    )
    append_log(tx, state.run_id, parts, version + 1)
