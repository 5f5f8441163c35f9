"""A small MCP server to mount behind toolwire in tests/server/test_upstreams.py (not an example): it says its pid
(so a test can kill it), what environment it got, and grows tools at runtime (its clients get list_changed)."""

import os

from toolwire_server import Registry

registry = Registry("toolwire-upstream-tools")


@registry.tool(description="This server's process id.")
async def pid() -> int:
    return os.getpid()


@registry.tool(description="The names of the environment variables this server got.")
async def env_names() -> list[str]:
    return sorted(os.environ)


@registry.tool(description="Add a tool of this name to this server (its clients are told the list changed).")
async def grow(name: str) -> str:
    if name not in registry:

        async def grown() -> str:
            return f"{name} grown here"

        registry.add(grown, name=name, description="A tool added at runtime.")
    return "grew"


@registry.prompt(description="Greet someone by name.")
def greet(name: str) -> str:
    return f"Say hello to {name}."
