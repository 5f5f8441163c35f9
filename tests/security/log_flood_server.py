"""A stdio tool server (the SDK's MCPServer) whose tool `flood` sends `lines` log messages (MCP logging,
`notifications/message`) of `chars` characters each, as fast as it can.

    python tests/security/log_flood_server.py
"""

import warnings

from mcp.server.mcpserver import Context, MCPServer

warnings.simplefilter("ignore")
server = MCPServer("flood", log_level="WARNING")


@server.tool(description="Log `lines` messages of `chars` characters each.")
async def flood(lines: int, chars: int, ctx: Context) -> str:
    for n in range(lines):
        await ctx.info(f"line {n} " + "x" * chars)
    return f"logged {lines} lines"


if __name__ == "__main__":
    server.run()
