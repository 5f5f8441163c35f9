"""An MCP server of the tests' own, on the SDK's MCPServer, that asks its client for things while a call runs: a
tool that borrows the client's model (MCP sampling) and a tool that lists the client's roots. In the 2026-07-28 era
each asks by answering the call with an `InputRequiredResult` and reads the answer from the next round; in a
handshake-era session it sends `sampling/createMessage` / `roots/list` requests of its own, and says what an error
answer said (so a test sees the refusal the server got).

    python tests/loop/sampling_server.py   # stdio
"""

import warnings

import mcp_types as types
from mcp import MCPError
from mcp.server.mcpserver import Context, MCPServer
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

warnings.simplefilter("ignore")
server = MCPServer("sampling", log_level="WARNING")


def _request(text: str, max_tokens: int, tools: bool) -> types.CreateMessageRequestParams:
    return types.CreateMessageRequestParams(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text=text))],
        system_prompt="Summarise in five words.",
        max_tokens=max_tokens,
        tools=[types.Tool(name="lookup", input_schema={"type": "object"})] if tools else None,
    )


@server.tool(description="Summarise a text with the client's model (MCP sampling).")
async def summarize(
    text: str, ctx: Context, max_tokens: int = 50, with_tools: bool = False
) -> str | types.InputRequiredResult:
    params = _request(text, max_tokens, with_tools)
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        answer = (ctx.input_responses or {}).get("summary")
        if answer is None:
            return types.InputRequiredResult(
                input_requests={"summary": types.CreateMessageRequest(params=params)}, request_state="asked"
            )
        assert isinstance(answer, types.CreateMessageResult)
    else:
        try:
            answer = await ctx.session.send_request(
                types.CreateMessageRequest(params=params), types.CreateMessageResult
            )
        except MCPError as exc:
            return f"refused: {exc.error.message}"
    content = answer.content
    said = content.text if isinstance(content, types.TextContent) else content.type
    return f"summary by {answer.model} ({answer.stop_reason}): {said}"


@server.tool(description="List the folders the client says this server may work in (MCP roots).")
async def my_roots(ctx: Context) -> str | types.InputRequiredResult:
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        answer = (ctx.input_responses or {}).get("roots")
        if answer is None:
            return types.InputRequiredResult(input_requests={"roots": types.ListRootsRequest()}, request_state="asked")
        assert isinstance(answer, types.ListRootsResult)
    else:
        try:
            answer = await ctx.session.send_request(types.ListRootsRequest(), types.ListRootsResult)
        except MCPError as exc:
            return f"refused: {exc.error.message}"
    return " ".join(str(root.uri) for root in answer.roots) or "(none)"


@server.tool(description="What the client advertised.")
async def capabilities(ctx: Context) -> str:
    caps = ctx.client_capabilities
    return f"sampling={caps.sampling is not None if caps else None} roots={caps.roots is not None if caps else None}"


if __name__ == "__main__":
    server.run()
