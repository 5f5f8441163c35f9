"""An MCP server of the tests' own, on the SDK's MCPServer: it has `instructions`, a tool that logs through MCP
logging (`notifications/message`), and a tool that adds `late_tool` at run time and says its tool list changed
(a `subscriptions/listen` event in the 2026-07-28 era, `notifications/tools/list_changed` in a handshake-era
session). Argument: `legacy` to speak only the handshake era.

    python tests/loop/notifying_server.py   # stdio
"""

import warnings

from late_tool import offer_late_tool
from mcp.server.mcpserver import Context, MCPServer

warnings.simplefilter("ignore")
server = MCPServer("notifying", instructions="Always greet the user by name: Ada.", log_level="WARNING")


@server.tool(description="Say hello, and log that it did.")
async def hello(ctx: Context) -> str:
    await ctx.info("hello was called")
    return "hello"


offer_late_tool(server, handshake_era_too=True)


if __name__ == "__main__":
    server.run()
