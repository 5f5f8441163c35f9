"""Tools for the limits and audit tests (not an example): cheap calls to count, a refund with a secret argument,
and a call that holds until the test lets it go (so calls in flight can be counted without timing)."""

import anyio

from toolwire_server import Registry

registry = Registry("toolwire-policy-tools")
released = anyio.Event()
"""In-process tests: `hold` returns once this is set (the test makes a fresh one per test)."""
holding = {"now": 0, "most": 0}


@registry.tool(description="Echo the text back.")
async def echo(text: str) -> str:
    return text


@registry.tool(description="Refund an order to a card.")
async def issue_refund(order_id: str, amount: float, card_number: str) -> str:
    return f"refunded {amount} on order {order_id} to card ending {card_number[-4:]}"


@registry.tool(description="Look an order up.")
async def get_order(order_id: str) -> str:
    return f"order {order_id}: shipped"


@registry.tool(description="Hold until released; counts how many run at once.")
async def hold() -> str:
    holding["now"] += 1
    holding["most"] = max(holding["most"], holding["now"])
    try:
        await released.wait()
    finally:
        holding["now"] -= 1
    return "released"
