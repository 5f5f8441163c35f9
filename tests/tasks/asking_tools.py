"""A tool that runs only as an MCP task and asks a person a question mid-task (elicitation inside a task): each start
and each answer it gets is appended to the JSON-lines file named by ELICIT_LOG, so a test sees it ran once."""

import json
import os
from typing import Any

from toolwire_server import Registry, ToolContext

registry = Registry("task-questions")

PARTY = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "party": {"type": "integer", "minimum": 1}},
    "required": ["name", "party"],
}


def _note(**what: Any) -> None:
    path = os.environ.get("ELICIT_LOG")
    if path:
        with open(path, "a") as log:
            log.write(json.dumps(what) + "\n")


@registry.tool(description="Book a table; asks who and for how many.", task="required", timeout_s=300)
async def book_table(restaurant: str, ctx: ToolContext) -> str:
    _note(event="started", restaurant=restaurant)
    answer = await ctx.elicit(f"Who is the table at {restaurant} for?", PARTY)
    _note(event="answered", action=answer.action, content=answer.content)
    if not answer.accepted or answer.content is None:
        return f"not booked: the person chose {answer.action}"
    return f"booked {restaurant} for {answer.content['name']}, {answer.content['party']} people"


@registry.tool(
    description="Connect to a service; asks the person to log in first, then works as a task.",
    task="required",
    ask_before_task=True,
    timeout_s=300,
)
async def connect(service: str, ctx: ToolContext) -> str:
    _note(event="started", service=service)
    answer = await ctx.elicit_url(f"Log in to {service}", f"https://login.example.com/{service}")
    _note(event="answered", action=answer.action)
    return f"connected to {service}" if answer.accepted else f"not connected: the person chose {answer.action}"


@registry.prompt(description="A briefing for a restaurant; asks whom it is for.")
async def briefing(restaurant: str, ctx: ToolContext) -> str:
    answer = await ctx.elicit(f"Who is the briefing on {restaurant} for?", PARTY)
    return f"Brief {answer.content['name']} on {restaurant}" if answer.accepted and answer.content else "No briefing"
