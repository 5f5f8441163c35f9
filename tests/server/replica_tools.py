"""Tools for the replica tests (not an example): which process answered, so a test sees where each call went."""

import os

import anyio

from toolwire_server import Registry

registry = Registry("toolwire-replica-tools")


@registry.tool(description="Which replica and process answered: 'NAME:PID' (NAME from $TOOLWIRE_TEST_REPLICA).")
async def whoami() -> str:
    return f"{os.environ.get('TOOLWIRE_TEST_REPLICA', '')}:{os.getpid()}"


@registry.tool(description="Sleep `seconds`, then say which process answered (holds a connection busy).")
async def whoami_after(seconds: float) -> str:
    await anyio.sleep(seconds)
    return await whoami()
