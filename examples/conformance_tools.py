"""The fixture tools the official MCP conformance suite (server mode) calls, served by toolwire's registry.

`toolwire serve examples.conformance_tools:registry --http --port 3101`, then
`conformance server --url http://localhost:3101/mcp`. Resources, prompts and completion are not part of toolwire's
server; their scenarios are listed as expected failures in tests/server/conformance-baseline.yml."""

import anyio
import mcp_types as types

from toolwire_server import Registry, ToolContext

registry = Registry("toolwire-conformance")

TEST_IMAGE_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
TEST_AUDIO_BASE64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="


def _image() -> types.ImageContent:
    return types.ImageContent(type="image", data=TEST_IMAGE_BASE64, mime_type="image/png")


@registry.tool(description="Tests simple text content response")
async def test_simple_text() -> str:
    return "This is a simple text response for testing."


@registry.tool(description="Tests image content response")
async def test_image_content() -> list[types.ContentBlock]:
    return [_image()]


@registry.tool(description="Tests audio content response")
async def test_audio_content() -> list[types.ContentBlock]:
    return [types.AudioContent(type="audio", data=TEST_AUDIO_BASE64, mime_type="audio/wav")]


@registry.tool(description="Tests embedded resource content response")
async def test_embedded_resource() -> list[types.ContentBlock]:
    resource = types.TextResourceContents(
        uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
    )
    return [types.EmbeddedResource(type="resource", resource=resource)]


@registry.tool(description="Tests response with multiple content types (text, image, resource)")
async def test_multiple_content_types() -> list[types.ContentBlock]:
    resource = types.TextResourceContents(
        uri="test://mixed-content-resource", mime_type="application/json", text='{"test": "data", "value": 123}'
    )
    return [
        types.TextContent(type="text", text="Multiple content types test:"),
        _image(),
        types.EmbeddedResource(type="resource", resource=resource),
    ]


@registry.tool(description="Tests error response handling")
async def test_error_handling() -> types.CallToolResult:
    text = "This tool intentionally returns an error for testing"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


@registry.tool(description="Tests tool that emits log messages during execution")
async def test_tool_with_logging(ctx: ToolContext) -> str:
    for message in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.log("info", message)
        await anyio.sleep(0.05)  # the fixture contract: messages about 50 ms apart
    return "Tool with logging executed successfully"


@registry.tool(description="Tests tool that reports progress notifications")
async def test_tool_with_progress(ctx: ToolContext) -> str:
    for step in (0, 50, 100):
        await ctx.report_progress(step, 100, f"Completed step {step} of 100")
        await anyio.sleep(0.05)
    return "Tool with progress executed successfully"


@registry.tool(description="Tests server-initiated sampling (LLM completion request)")
async def test_sampling(prompt: str, ctx: ToolContext) -> str:
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))
    result = await ctx.session.create_message([message], max_tokens=100, related_request_id=ctx.request_id)
    content = result.content
    text = content.text if isinstance(content, types.TextContent) else "No response"
    return f"LLM response: {text}"


@registry.tool(description="Tests server-initiated elicitation (user input request)")
async def test_elicitation(message: str, ctx: ToolContext) -> str:
    schema = {
        "type": "object",
        "properties": {"response": {"type": "string", "description": "User's response"}},
        "required": ["response"],
    }
    result = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
    return f"User response: action={result.action}, content={result.content or {}}"
