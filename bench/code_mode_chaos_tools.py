"""The fan-out task's three tools for bench/code_mode_chaos.py, with the tool server's own record of each execution.

Served as a real process: `python -m toolwire_server bench/code_mode_chaos_tools.py:registry --stdio` (or `--http`).
Each tool does what the support ledger's does (examples/support_tools.py, its SQLite file in $TOOLWIRE_SUPPORT_DB)
and, once it has, writes a row of `executions` in $CHAOS_CALLS_DB: the tool, its call's label and idempotency key,
so the bench counts executions from the server's side, a resent one too. All three are idempotent (the two reads
are read-only; the refund keeps its receipt per key), so a call in flight at a kill is sent again with its key.

A kill point is a gate file in $CHAOS_GATE_DIR: `hold_LABEL_before` holds the call before it executes,
`hold_LABEL_after` after it has (LABEL: `search_orders`, `list_refunds_C7005`, `issue_refund`). A held call writes
`LABEL_started` (the server's pid) and waits until `release` exists, so the bench kills the agent with that call in
flight."""

import os
import sqlite3
import sys
from pathlib import Path
from typing import Annotated, Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # for helpers, as the bench scripts do

from examples import support_tools as ledger
from pydantic import Field

from helpers.gate import held
from toolwire_server import Registry

registry = Registry("code-mode-chaos", default_timeout_s=120)


def _record(tool: str, label: str, key: str | None) -> None:
    conn = sqlite3.connect(os.environ["CHAOS_CALLS_DB"], isolation_level=None, timeout=30)
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS executions (tool TEXT NOT NULL, label TEXT NOT NULL, key TEXT)")
        conn.execute("INSERT INTO executions VALUES (?, ?, ?)", (tool, label, key))
    finally:
        conn.close()


async def _hold(label: str, phase: str) -> None:
    """The kill point `hold_LABEL_PHASE` (PHASE: before or after the call executes); a held call writes
    LABEL_started."""
    await held("CHAOS_GATE_DIR", f"{label}_{phase}", started=label)


@registry.tool(description="Find a customer's orders, at most 20, newest first (read-only).", idempotent=True)
async def search_orders(
    customer_id: Annotated[str, Field(description="e.g. cus_7001")], idempotency_key: str | None = None
) -> list[dict[str, Any]]:
    await _hold("search_orders", "before")
    found = ledger.search_orders(customer_id)
    _record("search_orders", "search_orders", idempotency_key)
    await _hold("search_orders", "after")
    return found


@registry.tool(description="Every refund made on one order, oldest first (read-only).", idempotent=True)
async def list_refunds(
    order_id: Annotated[str, Field(description="e.g. C7001")], idempotency_key: str | None = None
) -> list[dict[str, Any]]:
    label = f"list_refunds_{order_id}"
    await _hold(label, "before")
    found = ledger.list_refunds(order_id)
    _record("list_refunds", label, idempotency_key)
    await _hold(label, "after")
    return found


@registry.tool(
    description="Refund an order in part, in cents. Needs a person's approval. A repeated idempotency key returns "
    "the first receipt and refunds nothing more.",
    risky=True,
    idempotent=True,
)
async def issue_refund(
    order_id: str, amount_cents: Annotated[int, Field(ge=1)], idempotency_key: str | None = None
) -> dict[str, Any]:
    await _hold("issue_refund", "before")
    receipt = ledger.issue_refund(order_id, amount_cents, idempotency_key)
    _record("issue_refund", "issue_refund", idempotency_key)
    await _hold("issue_refund", "after")
    return receipt
