"""An MCP server on the SDK's own MCPServer (not toolwire's, whose tools never see the request `_meta`) for the
shared-connection tests: `whoami` answers its process id, the `_meta` its request carried and, over HTTP, the
client's TCP port (which connection of the client's pool the request came on).

    python tests/loop/meta_server.py              # stdio
    python tests/loop/meta_server.py --http PORT  # Streamable HTTP on 127.0.0.1:PORT/mcp
"""

import json
import os
import sys
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

from toolwire_shared.tools import META_IDEMPOTENT

server = MCPServer("meta-echo", log_level="WARNING")


@server.tool(description="This server's process id and the request's _meta.", meta={META_IDEMPOTENT: True})
async def whoami(turn: int, ctx: Context[Any]) -> str:
    meta = ctx.request_context.meta
    seen = meta.model_dump(by_alias=True) if hasattr(meta, "model_dump") else dict(meta or {})
    request = ctx.request_context.request
    client = getattr(request, "client", None)
    peer = client.port if client is not None else None
    return json.dumps({"pid": os.getpid(), "turn": turn, "meta": seen, "peer": peer}, default=str)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
