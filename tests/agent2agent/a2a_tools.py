"""The tools of the agent tests/agent2agent serves over A2A: one that writes what it was given (risky in the tests: it
waits for approval), one that answers at once, one that works until a file exists (a task to cancel), and one that
asks a person a question (MCP elicitation)."""

import anyio

from toolwire_server import Registry, ToolContext

registry = Registry("toolwire-a2a-tests")


@registry.tool(description="Appends `text` as a line of the file `path` (a write: the tests make it risky).")
async def note(text: str, path: str) -> str:
    file = anyio.Path(path)
    before = await file.read_text() if await file.exists() else ""
    await file.write_text(before + text + "\n")
    return f"noted {text}"


@registry.tool(description="Says `text` louder.")
def shout(text: str) -> str:
    return text.upper()


@registry.tool(description="Writes PATH.started, then works until the file `path` exists.")
async def hold(path: str) -> str:
    await anyio.Path(path + ".started").write_text("started")
    while not await anyio.Path(path).exists():  # noqa: ASYNC110 - the test writes it: a file is the only event
        await anyio.sleep(0.05)
    return "held"


COLOUR = {"type": "object", "properties": {"colour": {"type": "string"}}, "required": ["colour"]}


@registry.tool(description="Asks which colour, then paints in it.")
async def paint(ctx: ToolContext) -> str:
    answer = await ctx.elicit("Which colour?", COLOUR)
    if not answer.accepted or answer.content is None:
        return f"not painted: {answer.action}"
    return f"painted {answer.content['colour']}"
