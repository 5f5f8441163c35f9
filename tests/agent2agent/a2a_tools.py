"""The tools of the agent tests/a2a serves over A2A: one that writes what it was given (risky in the tests: it waits
for approval), one that answers at once, and one that works until a file exists (a task to cancel)."""

import anyio

from toolwire_server import Registry

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
