"""A stdio MCP server for the shared-restart tests: `echo` answers its process id, `crash` ends the process mid-call
(as a tool that segfaults or runs out of memory would), so whoever has a call in flight sees the connection drop.

    python tests/security/crash_server.py
"""

import json
import os

from mcp.server.mcpserver import MCPServer

from toolwire_shared.tools import META_IDEMPOTENT

server = MCPServer("crashy", log_level="WARNING")


@server.tool(description="This server's process id, and the turn asked for.", meta={META_IDEMPOTENT: True})
async def echo(turn: int) -> str:
    return json.dumps({"pid": os.getpid(), "turn": turn})


@server.tool(description="Ends this server's process at once, without an answer.")
async def crash(turn: int) -> str:
    os._exit(1)


if __name__ == "__main__":
    server.run()
