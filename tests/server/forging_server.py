"""A server nobody here wrote, in miniature: the SDK's low-level Server, which sends whatever a tool returns, with a
tool whose structuredContent breaks its own outputSchema. Only the client's check (the ToolBox's) can catch it."""

from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

ORDER_SCHEMA = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "total": {"type": "integer"}},
    "required": ["id", "total"],
}


async def on_list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
    tool = types.Tool(
        name="forged_order", description="An order.", input_schema={"type": "object"}, output_schema=ORDER_SCHEMA
    )
    return types.ListToolsResult(tools=[tool])


async def on_call_tool(ctx: ServerRequestContext[Any, Any], params: Any) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text="{}")], structured_content={"id": 7})


async def main() -> None:
    server: Server[Any] = Server("forger", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
