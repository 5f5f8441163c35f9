"""Support-desk tools from the seeds, backed by a real SQLite file.

The database path comes from $TOOLWIRE_SUPPORT_DB; by default a file in the user data dir, created and seeded on
first use. Serve it with `toolwire serve examples.support_tools:registry --stdio`."""

import ast
import json
import math
import operator
import os
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from platformdirs import user_data_dir
from pydantic import Field

from toolwire_server import Registry, ToolContext
from toolwire_shared.tools import SKILL_PREFIX

DB_ENV = "TOOLWIRE_SUPPORT_DB"
AUDIT_DELAY_ENV = "TOOLWIRE_SUPPORT_AUDIT_DELAY_S"
"""How long audit_orders spends on each order (default 0.5 s: a slow check, long enough to watch its progress)."""
OrderStatus = Literal["open", "shipped", "delivered", "refunded", "cancelled"]

registry = Registry("toolwire-support")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS orders (
    id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, item TEXT NOT NULL, unit_price INTEGER NOT NULL,
    qty INTEGER NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS refunds (
    id TEXT PRIMARY KEY, order_id TEXT NOT NULL REFERENCES orders(id), amount_cents INTEGER NOT NULL,
    idempotency_key TEXT UNIQUE, created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
"""
_SEED = [
    ("A123", "cus_8123", "keyboard", 2500, 2, "delivered", "2026-11-02T10:00:00Z"),
    ("A124", "cus_8123", "mouse", 900, 1, "shipped", "2026-11-20T09:30:00Z"),
    ("A125", "cus_8123", "monitor", 14000, 1, "open", "2026-11-28T16:45:00Z"),
    ("B200", "cus_4410", "headphones", 3200, 1, "delivered", "2026-10-15T12:00:00Z"),
    ("B201", "cus_4410", "usb cable", 300, 3, "cancelled", "2026-11-25T08:15:00Z"),
]

BUSY_CUSTOMER = "cus_7001"
"""A customer with 24 orders (C7001..C7024, one a day, newest last) and refunds on most: the fan-out of code mode's
bench (bench/code_mode_bench.py): search_orders lists the 20 newest, list_refunds reads each one's refunds."""
_SEED += [
    (f"C70{n:02d}", BUSY_CUSTOMER, item, price, 1 + n % 3, "delivered", f"2026-10-{n:02d}T09:00:00Z")
    for n, (item, price) in enumerate(
        [("desk lamp", 2900), ("chair", 8900), ("webcam", 4500), ("notebook", 300), ("standing desk", 32000)] * 5, 1
    )
    if n <= 24
]
_SEED_REFUNDS = [
    (f"re_seed_{n:02d}_{k}", f"C70{n:02d}", 100 * ((n * 7 + k * 13) % 40 + 1), f"2026-11-{n:02d}T12:0{k}:00Z")
    for n in range(1, 25)
    for k in range(n % 4)
]
"""Refunds already made on the busy customer's orders (0 to 3 each)."""


def db_path() -> Path:
    return Path(os.environ.get(DB_ENV) or Path(user_data_dir("toolwire")) / "support.sqlite3")


@contextmanager
def _connect() -> Iterator[sqlite3.Connection]:
    path = db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=10, isolation_level=None)
    conn.row_factory = sqlite3.Row
    try:
        conn.executescript(_SCHEMA)
        if conn.execute("SELECT COUNT(*) FROM orders").fetchone()[0] == 0:
            # One transaction: a server started beside this one sees no orders or all of them, never a part.
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("INSERT OR IGNORE INTO orders VALUES (?, ?, ?, ?, ?, ?, ?)", _SEED)
            conn.executemany(
                "INSERT OR IGNORE INTO refunds (id, order_id, amount_cents, created_at) VALUES (?, ?, ?, ?)",
                _SEED_REFUNDS,
            )
            conn.execute("COMMIT")
        yield conn
    finally:
        conn.close()


@registry.tool(
    description="Look up one order by its id (e.g. A123). Use it before answering any question about an order."
)
def get_order(order_id: Annotated[str, Field(description="order id, e.g. A123")]) -> dict[str, Any]:
    with _connect() as conn:
        row = conn.execute("SELECT * FROM orders WHERE id = ?", (order_id,)).fetchone()
    if row is None:
        raise ValueError(f"no order with id {order_id}; ids look like A123")
    return {
        "order_id": row["id"],
        "item": row["item"],
        "unit_price": row["unit_price"],
        "qty": row["qty"],
        "status": row["status"],
        "customer_id": row["customer_id"],
    }


@registry.tool(
    description="Find orders belonging to one customer, optionally only those with one status. Returns at most 20 "
    "orders, newest first. Returns an empty list if the customer has no matching orders."
)
def search_orders(
    customer_id: Annotated[str, Field(description="e.g. cus_8123")], status: OrderStatus | None = None
) -> list[dict[str, Any]]:
    query = "SELECT id AS order_id, item, status, created_at FROM orders WHERE customer_id = ?"
    args: list[Any] = [customer_id]
    if status is not None:
        query += " AND status = ?"
        args.append(status)
    with _connect() as conn:
        rows = conn.execute(query + " ORDER BY created_at DESC LIMIT 20", args).fetchall()
    return [dict(row) for row in rows]


TicketTopic = Literal["damaged_item", "late_delivery", "refund", "cancellation", "other"]
POLICIES: dict[str, str] = {
    "damaged_item": "Damaged items: the customer chooses a free replacement or a refund of the damaged units; no "
    "return shipping is needed; a photo of the damage is asked for only when the order is over 10000.",
    "late_delivery": "Late delivery: an order not delivered 10 days after it shipped is traced with the carrier; "
    "after 20 days the customer may cancel for a full refund.",
    "refund": "Refunds: delivered orders may be returned within 30 days for a refund of the returned units; the "
    "refund goes back to the original payment method within 5 working days.",
    "cancellation": "Cancellation: an open order can be cancelled at no cost; a shipped one must be returned first.",
    "other": "Anything else: answer what the tools can confirm and hand the ticket to a person for the rest.",
}


def get_policy(topic: Annotated[TicketTopic, Field(description="the kind of ticket, e.g. damaged_item")]) -> str:
    return POLICIES[topic]


AUDIT_NOTES = {
    "open": "not shipped yet: can be cancelled at no cost",
    "shipped": "on its way: a return waits until it is delivered",
    "delivered": "may be returned within 30 days of delivery",
    "refunded": "refunded: nothing left to do",
    "cancelled": "cancelled: nothing left to do",
}


async def audit_orders(
    customer_id: Annotated[str, Field(description="e.g. cus_8123")], ctx: ToolContext
) -> list[dict[str, str]]:
    """A long tool: checks each of a customer's orders in turn and reports its progress after each one."""
    orders = search_orders(customer_id)
    delay = float(os.environ.get(AUDIT_DELAY_ENV) or 0.5)
    findings = []
    for done, order in enumerate(orders, 1):
        await anyio.sleep(delay)  # the slow check (a carrier lookup, a fraud score) this example stands in for
        findings.append(
            {"order_id": order["order_id"], "status": order["status"], "note": AUDIT_NOTES[order["status"]]}
        )
        await ctx.report_progress(done, len(orders), f"checked {order['order_id']}")
    return findings


def _with_support_tools(copy: Registry) -> Registry:
    """`copy` given every tool of `registry`, with its policy: the desk and the ledger start from the same tools."""
    for tool in registry:
        policy = tool.policy
        options = {"timeout_s": policy.timeout_s, "max_concurrency": policy.max_concurrency}
        copy.add(
            tool.fn,
            name=tool.name,
            description=tool.description,
            risky=policy.risky,
            idempotent=policy.idempotent,
            **options,
        )
    return copy


def _desk() -> Registry:
    """The support desk of the workflow and skills examples: every support tool plus get_policy and audit_orders (a
    long tool that reports progress). A registry of its own, so the tools (and the token counts) of runs on
    `registry` stay what they were."""
    desk = _with_support_tools(Registry("toolwire-support-desk"))
    desk.add(
        get_policy,
        description="The support policy for one kind of ticket (damaged_item, late_delivery, refund, cancellation, "
        "other). Follow it when you answer a customer.",
    )
    desk.add(
        audit_orders,
        description="Check every order of one customer against the support policy and say what can be done with "
        "each. Slow (it takes a while per order): use it when a customer asks about all their orders.",
        idempotent=True,
    )
    # The same policy text and order lookup as resources, for a client that shows them to a person or attaches
    # them to a prompt instead of letting the model call a tool.
    desk.resource("policy://refunds", name="refund_policy", mime_type="text/plain")(refund_policy)
    desk.resource_template(
        "orders://{order_id}",
        name="order",
        mime_type="application/json",
        description="One order by id, e.g. orders://A123: item, unit price, quantity, status, customer.",
        complete=order_ids,
    )(get_order)
    desk.prompt("answer_ticket", complete=_ticket_values)(answer_ticket)
    return desk


def answer_ticket(order_id: str, topic: TicketTopic = "other") -> list[object]:
    """Answer a customer's ticket about one order: the policy for its topic, then the order to look up."""
    return [
        f"Policy for this ticket: {POLICIES[topic]}",
        f"A customer writes about order {order_id} ({topic.replace('_', ' ')}). Look the order up with get_order, "
        "then answer them as the policy says, in two or three sentences.",
    ]


def _ticket_values(argument: str, partial: str) -> list[str]:
    """Completion of answer_ticket's arguments: order ids from the table, topics from the policy list."""
    if argument == "topic":
        return [topic for topic in POLICIES if topic.startswith(partial)]
    return order_ids(argument, partial)


def refund_policy() -> str:
    """The refund policy, the text get_policy('refund') answers."""
    return POLICIES["refund"]


def order_ids(variable: str, partial: str) -> list[str]:
    """Order ids that start with what was typed (completion of orders://{order_id})."""
    with _connect() as conn:
        rows = conn.execute("SELECT id FROM orders WHERE id LIKE ? ORDER BY id LIMIT 100", (partial + "%",))
        return [row["id"] for row in rows]


# The calculator's arithmetic: an AST walk over numbers and + - * / // % ** (never eval()) that bounds every result
# before computing it, so no expression (`9**9**9**9`, `(10**10**8)`, a tower of powers) holds the server for more
# than microseconds or answers with anything but a readable error. Kept in this file: evals load it by path.

CALC_MAX_CHARS = 1000
CALC_MAX_DEPTH = 100
CALC_MAX_BITS = 4000
"""Integers up to about 1200 digits: far past any amount of money, far below what takes time to compute."""

Number = int | float
_OPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_ALLOWED = "only numbers, parentheses and + - * / // % ** are allowed, e.g. '2500 * 2 * 1.18'"
_DIGITS = CALC_MAX_BITS * 3 // 10
_TOO_LARGE = f"the result would be too large (this calculator handles numbers up to about {_DIGITS} digits)"


def evaluate(expression: str) -> Number:
    """The value of `expression`; ValueError with a sentence the model can act on for anything else."""
    if len(expression) > CALC_MAX_CHARS:
        raise ValueError(f"the expression is {len(expression)} characters long; at most {CALC_MAX_CHARS} are allowed")
    try:
        tree = ast.parse(expression, mode="eval")
    except (SyntaxError, RecursionError, MemoryError) as exc:
        shown = expression if len(expression) <= 100 else expression[:100] + "..."
        raise ValueError(f"not an arithmetic expression: {shown!r}; write e.g. '2500 * 2 * 1.18'") from exc
    except ValueError as exc:  # e.g. an integer literal past Python's digit limit
        raise ValueError(f"not a usable number in {expression[:50]!r}...: {exc}") from exc
    return _evaluate(tree.body, 0)


def _evaluate(node: ast.AST, depth: int) -> Number:
    if depth > CALC_MAX_DEPTH:
        raise ValueError(f"the expression is nested more than {CALC_MAX_DEPTH} levels deep; split it into steps")
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return _finite(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _evaluate(node.operand, depth + 1)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _evaluate(node.left, depth + 1), _evaluate(node.right, depth + 1)
        _check_size(node.op, left, right)
        try:
            return _finite(_OPS[type(node.op)](left, right))
        except ZeroDivisionError as exc:
            raise ValueError("division by zero") from exc
        except OverflowError as exc:
            raise ValueError(_TOO_LARGE) from exc
    raise ValueError(_ALLOWED)


def _check_size(op: ast.operator, left: Number, right: Number) -> None:
    """Refuse before computing an integer result past CALC_MAX_BITS (a float result overflows at once, and is
    checked)."""
    if not (isinstance(left, int) and isinstance(right, int)):
        return
    if isinstance(op, ast.Pow) and right > 0 and abs(left) > 1:
        bits = right * math.log2(abs(left)) if right.bit_length() < 64 else math.inf
    elif isinstance(op, ast.Mult):
        bits = left.bit_length() + right.bit_length()
    else:
        return
    if bits > CALC_MAX_BITS:
        raise ValueError(f"{_TOO_LARGE}: this step alone would need about {bits:.3g} bits")


def _finite(value: Any) -> Number:
    if isinstance(value, complex):  # a negative number to a fractional power
        raise ValueError("the result is not a real number (a negative number to a fractional power)")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(_TOO_LARGE)
    number: Number = value
    return number


@registry.tool(description="Evaluate arithmetic such as '2500 * 2 * 1.18'. Use it for every calculation.")
async def calculator(expression: Annotated[str, Field(description="e.g. 2500 * 2 * 1.18")]) -> float:
    return round(evaluate(expression), 2)  # bounded before it computes: microseconds on the loop, whatever the input


@registry.tool(
    description="Refund an order in whole or in part. Amounts are in cents. Needs a person's approval. "
    "A repeated idempotency key returns the first receipt and refunds nothing more.",
    risky=True,
    idempotent=True,
)
def issue_refund(
    order_id: str, amount_cents: Annotated[int, Field(ge=1)], idempotency_key: str | None = None
) -> dict[str, Any]:
    with _connect() as conn:
        conn.execute("BEGIN IMMEDIATE")  # one writer at a time: the key check and the insert are atomic
        try:
            if idempotency_key is not None:
                done = conn.execute("SELECT * FROM refunds WHERE idempotency_key = ?", (idempotency_key,)).fetchone()
                if done is not None:
                    conn.execute("COMMIT")
                    return _receipt(done, repeated=True)
            order = conn.execute("SELECT * FROM orders WHERE id = ?", (order_id,)).fetchone()
            if order is None:
                raise ValueError(f"no order with id {order_id}; ids look like A123")
            refunded = conn.execute(
                "SELECT COALESCE(SUM(amount_cents), 0) FROM refunds WHERE order_id = ?", (order_id,)
            ).fetchone()[0]
            left = order["unit_price"] * order["qty"] * 100 - refunded
            if amount_cents > left:
                raise ValueError(f"order {order_id} has {left} cents left to refund; asked for {amount_cents}")
            refund_id = "re_" + uuid.uuid4().hex[:12]
            conn.execute(
                "INSERT INTO refunds (id, order_id, amount_cents, idempotency_key) VALUES (?, ?, ?, ?)",
                (refund_id, order_id, amount_cents, idempotency_key),
            )
            if amount_cents == left:
                conn.execute("UPDATE orders SET status = 'refunded' WHERE id = ?", (order_id,))
            row = conn.execute("SELECT * FROM refunds WHERE id = ?", (refund_id,)).fetchone()
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return _receipt(row, repeated=False)


def _receipt(row: sqlite3.Row, *, repeated: bool) -> dict[str, Any]:
    return {
        "refund_id": row["id"],
        "order_id": row["order_id"],
        "amount_cents": row["amount_cents"],
        "repeated": repeated,
    }


def refunds_total(order_id: str) -> int:
    """For checks: the cents refunded on one order so far."""
    with _connect() as conn:
        return int(
            conn.execute(
                "SELECT COALESCE(SUM(amount_cents), 0) FROM refunds WHERE order_id = ?", (order_id,)
            ).fetchone()[0]
        )


desk = _desk()
"""Serve it with `toolwire serve examples.support_tools:desk --stdio` (examples/support_workflow.py does)."""


def list_refunds(order_id: Annotated[str, Field(description="order id, e.g. C7001")]) -> list[dict[str, Any]]:
    with _connect() as conn:
        order = conn.execute("SELECT * FROM orders WHERE id = ?", (order_id,)).fetchone()
        if order is None:
            raise ValueError(f"no order with id {order_id}; ids look like A123")
        rows = conn.execute("SELECT * FROM refunds WHERE order_id = ? ORDER BY created_at, id", (order_id,)).fetchall()
    return [
        {
            "refund_id": row["id"],
            "order_id": row["order_id"],
            "customer_id": order["customer_id"],
            "amount_cents": row["amount_cents"],
            "currency": "USD",
            "status": "succeeded",
            "method": "original_payment",
            "created_at": row["created_at"],
            "note": f"refund on {order['item']} (order {order_id})",
        }
        for row in rows
    ]


def _ledger() -> Registry:
    """The support tools plus list_refunds (every refund made on one order): code mode's fan-out (bench, tests). A
    registry of its own, so the tools (and the token counts) of runs on `registry` stay what they were."""
    ledger = _with_support_tools(Registry("toolwire-support-ledger"))
    ledger.add(
        list_refunds,
        description="Every refund made on one order (oldest first): id, amount in cents, status, when. An empty list "
        "when it has none.",
    )
    return ledger


ledger = _ledger()
"""Serve it with `toolwire serve examples.support_tools:ledger --stdio`."""


# ---- the desk's skills: MCP prompts named skill.NAME (docs/skills.md). A client with skills on lists each one's
# name and docstring (its one-line description) to the model, and loads the text when the model asks for it. A step
# that says "Call TOOL" names the tool it uses; scripted:skills follows the steps as they are written here.


@desk.prompt(SKILL_PREFIX + "process_return")
def process_return() -> str:
    """How to process a return or refund request: check the order and the policy, work out the amount, refund it."""
    return """Process a customer's return or refund request.
1. Call get_order with the order id the customer gives (like A123); read its status, item, qty and unit_price.
2. Call get_policy with topic refund; promise nothing it does not allow.
3. Check the status: only a delivered order can be returned. If it is not, tell the customer what can be done and
   stop: an open order can be cancelled at no cost, a shipped one is returned once it arrives, a refunded or
   cancelled one has nothing left to refund.
4. Call calculator for the refund in cents: unit_price * returned units * 100 (every unit, unless the customer
   names fewer).
5. Call issue_refund with the order id and that amount_cents; a person approves it before it runs. Never refund
   more than the order's total.
6. Answer: the units and item refunded, the amount in cents, and that it goes back to the original payment method
   within 5 working days."""


@desk.prompt(SKILL_PREFIX + "shipping_delay")
def shipping_delay() -> str:
    """How to answer a customer whose order has not arrived: where it is and what the late-delivery policy offers."""
    return """Answer a customer whose order is late or has not arrived.
1. Call get_order with the order id the customer gives; read its status and item.
2. Call get_policy with topic late_delivery.
3. Check the status: only a shipped order can be late in transit. If it is not, tell the customer and stop: an
   open order has not shipped yet and can still be cancelled at no cost, a delivered one was handed over (ask them
   to check with neighbours while a person looks into it).
4. Answer: apologise for the wait, say the order is on its way, and what the policy offers: a trace with the
   carrier 10 days after shipping, and cancelling for a full refund after 20 days. Do not promise a date."""


@desk.prompt(SKILL_PREFIX + "damaged_item")
def damaged_item() -> str:
    """How to handle an item that arrived broken or damaged: replacement or refund, as the policy allows."""
    return """Handle a ticket about an item that arrived broken or damaged.
1. Call get_order with the order id the customer gives; read its status, item, qty and unit_price.
2. Call get_policy with topic damaged_item.
3. Check the status: only a delivered order can have arrived damaged. If it is not, stop and say: a person will
   look into the ticket.
4. Answer: say sorry, and offer what the policy gives: a free replacement or a refund of the damaged units, with no
   return shipping. Ask for a photo of the damage only when the order's total (unit_price * qty) is over 10000."""


if __name__ == "__main__":
    print(json.dumps([tool.spec().model_dump() for tool in registry], indent=2))
