"""An MCP server on the SDK's own MCPServer (not toolwire's, which cuts its own results) with tool names the providers
refuse: `files.read` (a dot), a 70-character name, and `dump`, which answers 200,000 characters. Each answer names
the server, so a test sees which server's tool a call reached.

    python tests/loop/names_server.py LABEL          # only the long-named tool
    python tests/loop/names_server.py LABEL --all    # files.read, the long-named tool and dump
"""

import sys

from mcp.server.mcpserver import MCPServer

LONG_NAME = "report_" + "quarterly_revenue_by_region_" * 2 + "product"
DUMP_CHARS = 200_000

label = sys.argv[1]
server = MCPServer(f"names-{label}", log_level="WARNING")


@server.tool(name=LONG_NAME, description="A tool whose name is 70 characters long.")
def long_named() -> str:
    return f"{label}: long-named tool"


if sys.argv[2:3] == ["--all"]:

    @server.tool(name="files.read", description="Read a file (a dotted name).")
    def files_read(path: str) -> str:
        return f"{label}: read {path}"

    @server.tool(name="dump", description="Answer a very long text.")
    def dump() -> str:
        return "y" * DUMP_CHARS


if __name__ == "__main__":
    server.run()
