"""Tools that ask the person behind the client (form and URL mode), for the elicitation tests. Each run of a tool is
appended to the JSON-lines file named by ELICIT_LOG, with what it was answered, so a test sees how often a tool ran
and what reached it."""

import json
import os
from typing import Any

from toolwire_server import Elicited, Registry, ToolContext

registry = Registry("elicit-tools")

PARTY = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "party": {"type": "integer", "minimum": 1}},
    "required": ["name", "party"],
}


def _note(tool: str, **what: Any) -> None:
    path = os.environ.get("ELICIT_LOG")
    if path:
        with open(path, "a") as log:
            log.write(json.dumps({"tool": tool, **what}) + "\n")


def _said(answer: Elicited) -> dict[str, Any]:
    return {"action": answer.action, "content": answer.content, "problem": answer.problem}


@registry.tool(description="Book a table; asks who and for how many.")
async def book_table(restaurant: str, ctx: ToolContext) -> str:
    answer = await ctx.elicit(f"Who is the table at {restaurant} for?", PARTY)
    _note("book_table", restaurant=restaurant, **_said(answer))
    if answer.action == "malformed":
        return f"not booked: the answer did not fit ({answer.problem})"
    if not answer.accepted or answer.content is None:
        return f"not booked: the person chose {answer.action}"
    return f"booked {restaurant} for {answer.content['name']}, {answer.content['party']} people"


@registry.tool(description="Log in to a service; sends the person to its login page.")
async def connect(service: str, ctx: ToolContext) -> str:
    answer = await ctx.elicit_url(f"Log in to {service}", f"https://login.example.com/{service}")
    _note("connect", service=service, **_said(answer))
    return f"connected to {service}" if answer.accepted else f"not connected: {answer.action}"


@registry.tool(description="Asks two questions in a row.")
async def two_questions(ctx: ToolContext) -> str:
    first = await ctx.elicit("First?", {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
    second = await ctx.elicit("Second?", {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]})
    _note("two_questions", first=_said(first), second=_said(second))
    return f"{(first.content or {}).get('a')} then {(second.content or {}).get('b')}"
