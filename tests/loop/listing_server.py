"""An MCP server of the tests' own that counts how often it was asked for its tool list (tool `listings`), and adds
`late_tool` at run time, saying its tool list changed (a `subscriptions/listen` event).

    python tests/loop/listing_server.py   # stdio
"""

import warnings

from mcp.server.mcpserver import Context, MCPServer

warnings.simplefilter("ignore")
server = MCPServer("listing", log_level="WARNING")
asked = 0


async def counted_list_tools():  # type: ignore[no-untyped-def]
    global asked
    asked += 1
    return await type(server).list_tools(server)


server.list_tools = counted_list_tools  # type: ignore[method-assign]


@server.tool(description="How many times tools/list was answered so far.")
def listings() -> str:
    return str(asked)


def late_tool() -> str:
    """A tool that was not there at the start."""
    return "late and working"


@server.tool(description="Add the tool late_tool.")
async def add_late_tool(ctx: Context) -> str:
    server.add_tool(late_tool, name="late_tool", description="A tool that was not there at the start.")
    await ctx.notify_tools_changed()
    return "added late_tool"


if __name__ == "__main__":
    server.run()
