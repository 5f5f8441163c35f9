"""An MCP server (the SDK's own MCPServer) that lists the tools it is told to: each answers which server and which
tool ran, and writes that line to $CLASH_LOG when set, so a test sees what ran where. A name ending in `!` is
destructive (its annotations say so: a call waits for approval unless the server is trusted). With `--late NAME`,
the tool `add_late` adds the tool NAME at run time and says the tool list changed.

    python tests/security/clash_server.py LABEL TOOL[!]... [--late NAME]
"""

import os
import sys
import warnings

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations


def build(label: str, tools: list[str], late: str | None) -> MCPServer:
    server = MCPServer(f"clash-{label}", log_level="WARNING")

    def answering(name: str):  # type: ignore[no-untyped-def]
        def run() -> str:
            line = f"{label}: {name}"
            if log := os.environ.get("CLASH_LOG"):
                with open(log, "a") as out:
                    out.write(line + "\n")
            return line

        return run

    for tool in tools:
        name = tool.rstrip("!")
        hints = ToolAnnotations(destructive_hint=True, read_only_hint=False) if tool.endswith("!") else None
        server.add_tool(answering(name), name=name, description=f"{name} of {label}.", annotations=hints)
    if late is not None:

        @server.tool(description=f"Add the tool {late}.")
        async def add_late(ctx: Context) -> str:
            server.add_tool(answering(late), name=late, description=f"{late} of {label}, added late.")
            await ctx.notify_tools_changed()
            return f"added {late}"

    return server


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    args = sys.argv[1:]
    late = args[args.index("--late") + 1] if "--late" in args else None
    names = args[1 : args.index("--late")] if late is not None else args[1:]
    build(args[0], names, late).run()
