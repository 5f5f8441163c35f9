"""An MCP server of the tests' own that counts how often it was asked for its tool and resource lists (tool
`listings`), adds `late_tool` at run time, saying its tool list changed, and a resource, saying its resource list
changed (`subscriptions/listen` events).

    python tests/loop/listing_server.py   # stdio
"""

import warnings

from late_tool import offer_late_tool
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resources import TextResource

warnings.simplefilter("ignore")
server = MCPServer("listing", log_level="WARNING")
asked = {"tools": 0, "resources": 0}


async def counted_list_tools():  # type: ignore[no-untyped-def]
    asked["tools"] += 1
    return await type(server).list_tools(server)


async def counted_list_resources():  # type: ignore[no-untyped-def]
    asked["resources"] += 1
    return await type(server).list_resources(server)


server.list_tools = counted_list_tools  # type: ignore[method-assign]
server.list_resources = counted_list_resources  # type: ignore[method-assign]


@server.resource("memo://first", description="The first memo.")
def first_memo() -> str:
    return "first"


@server.tool(description="How many times tools/list and resources/list were answered so far.")
def listings() -> str:
    return f"tools {asked['tools']}, resources {asked['resources']}"


@server.tool(description="Add the resource memo://second.")
async def add_memo(ctx: Context) -> str:
    server.add_resource(TextResource(uri="memo://second", name="second", text="second"))
    await ctx.notify_resources_changed()
    return "added memo://second"


offer_late_tool(server)


if __name__ == "__main__":
    server.run()
