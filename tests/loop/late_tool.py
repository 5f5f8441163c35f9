"""The tool the tests' own MCP servers add at run time (listing_server.py, notifying_server.py, run as scripts: this
file sits beside them): `add_late_tool` registers `late_tool` and says the tool list changed."""

from contextlib import suppress

from mcp.server.mcpserver import Context, MCPServer


def late_tool() -> str:
    """A tool that was not there at the start."""
    return "late and working"


def offer_late_tool(server: MCPServer, handshake_era_too: bool = False) -> None:
    """Give `server` the tool `add_late_tool`; `handshake_era_too`: also send `notifications/tools/list_changed`
    (a handshake-era session hears only that)."""

    @server.tool(description="Add the tool late_tool.")
    async def add_late_tool(ctx: Context) -> str:
        server.add_tool(late_tool, name="late_tool", description="A tool that was not there at the start.")
        await ctx.notify_tools_changed()
        if handshake_era_too:
            with suppress(Exception):
                await ctx.session.send_tool_list_changed()
        return "added late_tool"
