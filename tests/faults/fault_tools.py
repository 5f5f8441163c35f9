"""Tools for the fault tests (not an example): CPU-bound, hung, hostile-echoing and worker-reporting tools that record
what happened to them in files (`marker` + ".started" holds the pid of the process the tool runs in)."""

import os
from pathlib import Path

from toolwire_server import Registry

registry = Registry("toolwire-fault-tools")


def _started(marker: str) -> None:
    Path(marker + ".started").write_text(str(os.getpid()))


@registry.tool(description="Echo the text back.")
async def echo(text: str) -> str:
    return text


@registry.tool(description="Add two integers.")
async def add(a: int, b: int) -> int:
    return a + b


@registry.tool(description="Look a record up by key; fails with a message that quotes the key.")
def lookup(key: str) -> str:
    raise ValueError(f"no record with key {key}")
