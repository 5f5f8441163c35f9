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
        tools=[types.Tool(name="look.up", input_schema={"type": "object"})]
        if tools
        else None,  # a name no provider takes
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


LOOKUP = types.Tool(
    name="lookup",
    description="Look up a fact by its key.",
    input_schema={"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
)


def _with_tools(messages: list[types.SamplingMessage]) -> types.CreateMessageRequest:
    auto = types.ToolChoice(mode="auto")
    params = types.CreateMessageRequestParams(messages=messages, max_tokens=60, tools=[LOOKUP], tool_choice=auto)
    return types.CreateMessageRequest(params=params)


def _blocks(result: types.CreateMessageResultWithTools) -> list[types.SamplingMessageContentBlock]:
    return result.content if isinstance(result.content, list) else [result.content]


@server.tool(description="Answer a question with the client's model, which may call this server's lookup tool.")
async def research(question: str, ctx: Context) -> str | types.InputRequiredResult:
    """MCP's sampling tool loop: the model asks for `lookup`, the server runs it and samples again with the result
    (in the 2026-07-28 era across rounds, the tool call carried in `request_state`)."""
    asked = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=question))
    modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
    answers = ctx.input_responses or {}
    if modern and "second" in answers:
        final = answers["second"]
    else:
        if modern and "first" not in answers:
            return types.InputRequiredResult(input_requests={"first": _with_tools([asked])}, request_state="1")
        try:
            first = (
                answers["first"]
                if modern
                else await ctx.session.send_request(_with_tools([asked]), types.CreateMessageResultWithTools)
            )
        except MCPError as exc:
            return f"refused: {exc.error.message}"
        assert isinstance(first, types.CreateMessageResultWithTools)
        uses = [b for b in _blocks(first) if isinstance(b, types.ToolUseContent)]
        if not uses:
            return f"answered without looking up: {_blocks(first)}"
        found = types.TextContent(type="text", text=f"fact about {uses[0].input.get('key')}: otters hold hands")
        result = types.ToolResultContent(type="tool_result", tool_use_id=uses[0].id, content=[found])
        messages = [asked, types.SamplingMessage(role="assistant", content=uses)]
        messages.append(types.SamplingMessage(role="user", content=[result]))
        if modern:
            return types.InputRequiredResult(input_requests={"second": _with_tools(messages)}, request_state="2")
        final = await ctx.session.send_request(_with_tools(messages), types.CreateMessageResultWithTools)
    assert isinstance(final, types.CreateMessageResultWithTools)
    said = [b.text for b in _blocks(final) if isinstance(b, types.TextContent)]
    return f"research ({final.stop_reason}): {' '.join(said)}"


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
    if caps is None:
        return "none"
    tools = caps.sampling is not None and caps.sampling.tools is not None
    return f"sampling={caps.sampling is not None} roots={caps.roots is not None} sampling.tools={tools}"


if __name__ == "__main__":
    server.run()
