"""A small MCP server to mount behind toolwire in tests/server/test_upstreams.py (not an example): it says its pid
(so a test can kill it), what environment it got, grows tools and resources at runtime (its clients get
list_changed), and has resources: public notes, a private one, a template, and a tool that links to a note."""

import os

import mcp_types as types

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


@registry.prompt(
    description="Greet someone by name.",
    complete=lambda argument, partial: [n for n in ["ada", "grace"] if n.startswith(partial)],
)
def greet(name: str) -> str:
    return f"Say hello to {name}."


@registry.resource("notes://public/readme", mime_type="text/plain")
def readme() -> str:
    """The public readme."""
    return "read me"


@registry.resource("notes://private/secret", mime_type="text/plain")
def secret() -> str:
    """Only for agents granted private notes."""
    return "the secret"


@registry.resource_template(
    "notes://public/{name}",
    mime_type="text/plain",
    complete=lambda variable, partial: [n for n in ["ada", "alan", "grace"] if n.startswith(partial)],
)
def note(name: str) -> str:
    """Any public note, by name."""
    return f"note {name}"


@registry.tool(description="A link to the public readme (a resource link, for the client to read).")
async def readme_link() -> types.ResourceLink:
    return types.ResourceLink(type="resource_link", uri="notes://public/readme", name="readme")


@registry.tool(description="Add a public resource of this name (its clients are told the resource list changed).")
async def add_note(name: str) -> str:
    registry.resource(f"notes://public/added/{name}", name=name)(lambda: f"added {name}")
    return "added"


@registry.tool(description="Say the readme changed (its subscribers get notifications/resources/updated).")
async def touch_readme() -> str:
    registry.notify_resource_updated("notes://public/readme")
    return "touched"
