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


def build(label: str, everything: bool) -> MCPServer:
    """The server named `label`: the long-named tool only, or with `files.read` and `dump` too."""
    server = MCPServer(f"names-{label}", log_level="WARNING")

    @server.tool(name=LONG_NAME, description="A tool whose name is 70 characters long.")
    def long_named() -> str:
        return f"{label}: long-named tool"

    if everything:

        @server.tool(name="files.read", description="Read a file (a dotted name).")
        def files_read(path: str) -> str:
            return f"{label}: read {path}"

        @server.tool(name="dump", description="Answer a very long text.")
        def dump() -> str:
            return "y" * DUMP_CHARS

    return server


if __name__ == "__main__":  # the tests import LONG_NAME and DUMP_CHARS; only a server process reads its arguments
    build(sys.argv[1], sys.argv[2:3] == ["--all"]).run()
