"""Tools for the replica tests (not an example): which process answered, so a test sees where each call went."""

import os

from toolwire_server import Registry

registry = Registry("toolwire-replica-tools")


@registry.tool(
    description="Which replica and process answered: 'NAME:PID' (NAME from $TOOLWIRE_TEST_REPLICA); `turn` only "
    "makes each call of a run a different call.",
    idempotent=True,
)
async def whoami(turn: int = 0) -> str:
    return f"{os.environ.get('TOOLWIRE_TEST_REPLICA', '')}:{os.getpid()}"
