"""Tools with side effects a test can count, served by the real server over stdio for the crash tests:
`python -m toolwire_server tests/store/durable_tools.py:registry --stdio`.

Each write lands in the SQLite file $DURABLE_TEST_DB *before* the tool answers, like a real write whose answer is
lost when the caller dies; every call, a repeated one too, is a row of `calls` (the tool, its idempotency key). A
write holds (after its side effect) while $DURABLE_GATE_DIR/hold_NAME exists and $DURABLE_GATE_DIR/release does not,
writing NAME_started (with the server pid) so a test knows it is in flight."""

import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for helpers: loaded from a path, not by pytest

from helpers.gate import held
from toolwire_server import Registry

GATE = "DURABLE_GATE_DIR"

registry = Registry("durable-tests", default_timeout_s=120)


def _db() -> sqlite3.Connection:
    conn = sqlite3.connect(os.environ["DURABLE_TEST_DB"], isolation_level=None, timeout=30)
    conn.execute("CREATE TABLE IF NOT EXISTS notes (text TEXT NOT NULL)")
    conn.execute("CREATE TABLE IF NOT EXISTS calls (tool TEXT NOT NULL, idempotency_key TEXT)")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS refunds (order_id TEXT, amount_cents INTEGER, idempotency_key TEXT UNIQUE)"
    )
    return conn


@registry.tool(description="Append a note. Not idempotent: every call adds one.")
async def send_note(text: str) -> str:
    with _db() as conn:
        conn.execute("INSERT INTO calls VALUES ('send_note', NULL)")
        conn.execute("INSERT INTO notes (text) VALUES (?)", (text,))
    await held(GATE, "send_note")
    return f"noted: {text}"


@registry.tool(
    description="Refund an order. Idempotent by key: a repeated key returns the first receipt.", idempotent=True
)
async def refund(order_id: str, amount_cents: int, idempotency_key: str | None = None) -> dict[str, Any]:
    conn = _db()
    try:
        conn.execute("INSERT INTO calls VALUES ('refund', ?)", (idempotency_key,))
        if idempotency_key is not None:
            row = conn.execute(
                "SELECT order_id, amount_cents FROM refunds WHERE idempotency_key = ?", (idempotency_key,)
            ).fetchone()
            if row is not None:
                return {"order_id": row[0], "amount_cents": row[1], "repeated": True}
        conn.execute("INSERT INTO refunds VALUES (?, ?, ?)", (order_id, amount_cents, idempotency_key))
    finally:
        conn.close()
    await held(GATE, "refund")
    return {"order_id": order_id, "amount_cents": amount_cents, "repeated": False}
