"""Prompts and resources for the server tests (not an example), and tools that change them while the server runs,
so a test can watch the list-changed and resource-updated notifications arrive."""

from typing import Annotated

import mcp_types as types
from pydantic import Field

from toolwire_server import Registry

registry = Registry("toolwire-test-surface")


@registry.tool(description="Echo the text back.")
async def echo(text: str) -> str:
    return text


@registry.prompt(description="Ask for a summary of a ticket in a given tone.")
def summarize(ticket: Annotated[str, Field(description="the ticket id")], tone: str = "neutral") -> list[object]:
    return [
        f"Summarize ticket {ticket} in a {tone} tone.",
        types.PromptMessage(role="assistant", content=types.TextContent(type="text", text="Which details matter?")),
    ]


@registry.prompt()
async def greeting() -> str:
    """A one-line greeting prompt."""
    return "Say hello."


@registry.prompt(description="Always fails.")
def broken() -> str:
    raise RuntimeError("the prompt store is down")


ORDERS = {"A123": "keyboard", "A124": "mouse", "B200": "headphones"}
PIXEL = bytes.fromhex("89504e470d0a1a0a")  # enough of a PNG to be binary
_reads = {"count": 0}


@registry.resource("docs://readme", mime_type="text/markdown", description="How to use this desk.")
def readme() -> str:
    return "# Desk\nAsk about an order."


@registry.resource("docs://logo", mime_type="image/png")
def logo() -> bytes:
    """The desk's logo."""
    return PIXEL


@registry.resource("data://counter")
def counter() -> dict[str, int]:
    """How often the counter was bumped (JSON)."""
    return {"count": _reads["count"]}


@registry.resource("docs://broken")
def broken_doc() -> str:
    """Always fails."""
    raise OSError("disk gone")


def order_ids(variable: str, partial: str) -> list[str]:
    return [order for order in ORDERS if order.startswith(partial.upper())]


@registry.resource_template("orders://{order_id}", mime_type="text/plain", complete=order_ids)
def order(order_id: str) -> str:
    """One order by id, e.g. orders://A123."""
    if order_id not in ORDERS:
        raise KeyError(f"no order {order_id}")
    return f"order {order_id}: {ORDERS[order_id]}"


def no_pages(variable: str, partial: str) -> list[str]:
    raise LookupError("the page index is rebuilding")


@registry.resource_template("pages://{n}", complete=no_pages)
def page(n: int) -> str:
    """Page n (a number)."""
    return f"page {n}"


@registry.prompt(description="Draft a reply about one order.", complete=order_ids)
def reply(order_id: str) -> str:
    return f"Draft a reply about order {order_id}."


@registry.tool(description="Bump the counter resource and tell subscribers it changed.")
async def bump() -> int:
    _reads["count"] += 1
    registry.notify_resource_updated("data://counter")
    return _reads["count"]


@registry.tool(description="Register a new prompt while the server runs.")
def add_prompt(name: str) -> str:
    def added() -> str:
        return f"prompt {name}"

    registry.prompt(name, description=f"Added at runtime: {name}.")(added)
    return name


@registry.tool(description="Register a new tool while the server runs.")
def add_tool(name: str) -> str:
    async def added() -> str:
        return name

    registry.add(added, name=name, description=f"Added at runtime: {name}.")
    return name


@registry.tool(description="Register a new resource while the server runs.")
async def add_resource(uri: str, text: str) -> str:
    registry.resource(uri, name="note", description="Added at runtime.")(lambda: text)
    return uri
