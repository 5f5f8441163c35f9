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
