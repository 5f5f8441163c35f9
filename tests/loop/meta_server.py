"""A stdio MCP server on the SDK's own MCPServer (not toolwire's, whose tools never see the request `_meta`) for
the shared-connection tests: `whoami` answers its process id and the `_meta` its request carried."""

import json
import os
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

from toolwire_shared.tools import META_IDEMPOTENT

server = MCPServer("meta-echo", log_level="WARNING")


@server.tool(description="This server's process id and the request's _meta.", meta={META_IDEMPOTENT: True})
async def whoami(turn: int, ctx: Context[Any]) -> str:
    meta = ctx.request_context.meta
    seen = meta.model_dump(by_alias=True) if hasattr(meta, "model_dump") else dict(meta or {})
    return json.dumps({"pid": os.getpid(), "turn": turn, "meta": seen}, default=str)


if __name__ == "__main__":
    server.run()
