"""Tools a code-mode script calls in the crash and approval tests, served by the real server over stdio:
`toolwire serve tests/code_mode/script_tools.py:registry --stdio`.

Every call is a row of `calls` in $SCRIPT_TOOLS_DB (a repeated one too); a call's effect is a row of `effects`, one
per idempotency key (a resend with the same key has none). A call holds after its effect while
$SCRIPT_GATE_DIR/hold_NAME exists and $SCRIPT_GATE_DIR/release does not (NAME: `lookup_N`, `note`, `pay`), writing
NAME_started with the server's pid, so a test kills the run while that call is in flight."""

import os
import sqlite3
import sys
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for helpers: loaded from a path, not by pytest

from helpers.gate import held
from toolwire_server import Registry

GATE = "SCRIPT_GATE_DIR"

registry = Registry("script-tests", default_timeout_s=120)


def _record(name: str, key: str | None) -> None:
    conn = sqlite3.connect(os.environ["SCRIPT_TOOLS_DB"], isolation_level=None, timeout=30)
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS calls (name TEXT NOT NULL, idempotency_key TEXT)")
        conn.execute("CREATE TABLE IF NOT EXISTS effects (name TEXT NOT NULL, idempotency_key TEXT UNIQUE)")
        conn.execute("INSERT INTO calls VALUES (?, ?)", (name, key))
        conn.execute("INSERT OR IGNORE INTO effects VALUES (?, ?)", (name, key or uuid.uuid4().hex))
    finally:
        conn.close()


@registry.tool(description="Look up item n: its value. Idempotent by key.", idempotent=True)
async def lookup(n: int, idempotency_key: str | None = None) -> dict[str, Any]:
    _record(f"lookup_{n}", idempotency_key)
    await held(GATE, f"lookup_{n}")
    return {"n": n, "value": n * n}


@registry.tool(description="Append a note. Not idempotent: every call adds one.")
async def note(text: str) -> str:
    _record("note", None)
    await held(GATE, "note")
    return f"noted: {text}"


@registry.tool(description="Pay an amount. Needs a person's approval.", risky=True, idempotent=True)
async def pay(cents: int, idempotency_key: str | None = None) -> dict[str, Any]:
    _record("pay", idempotency_key)
    await held(GATE, "pay")
    return {"paid": cents}
