"""The fixture tools the official MCP conformance suite (server mode) calls, served by toolwire's registry.

`toolwire serve examples.conformance_tools:registry --http --port 3101`, then
`conformance server --url http://localhost:3101/mcp --suite all`. Every fixture of the 0.1.16 server scenarios is
here: tools, resources, a template, prompts (completion asks about one of them); tests/server/conformance-baseline.yml
lists what still does not apply, with the reason. examples/conformance_tasks.py adds the fixtures of the next suite
(0.2.0-alpha.12) to this registry: serve that module for both suites."""

import base64
import json

import anyio
import mcp_types as types
from pydantic import create_model

from toolwire_server import Registry, ToolContext

registry = Registry("toolwire-conformance")

TEST_IMAGE_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
TEST_AUDIO_BASE64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="


def _image() -> types.ImageContent:
    """The fixture PNG as a content block (tool results and prompt messages alike)."""
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


_FORM_ONLY = {"type": "object", "required": []}


@registry.tool(description="Tests elicitation with default values for every primitive type (SEP-1034)")
async def test_elicitation_sep1034_defaults(ctx: ToolContext) -> str:
    schema = {
        **_FORM_ONLY,
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        },
    }
    return await _elicit(ctx, "Please review and update the form fields with defaults", schema)


@registry.tool(description="Tests elicitation with the five enum schema forms (SEP-1330)")
async def test_elicitation_sep1330_enums(ctx: ToolContext) -> str:
    options = ["option1", "option2", "option3"]
    titled = [{"const": f"value{n}", "title": title} for n, title in enumerate(("First", "Second", "Third"), 1)]
    schema = {
        **_FORM_ONLY,
        "properties": {
            "untitledSingle": {"type": "string", "description": "Pick one", "enum": options},
            "titledSingle": {
                "type": "string",
                "description": "Pick one",
                "oneOf": [{**o, "title": f"{o['title']} Option"} for o in titled],
            },
            "legacyEnum": {
                "type": "string",
                "description": "Pick one (legacy)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "description": "Pick some",
                "items": {"type": "string", "enum": options},
            },
            "titledMulti": {
                "type": "array",
                "description": "Pick some",
                "items": {"anyOf": [{**o, "title": f"{o['title']} Choice"} for o in titled]},
            },
        },
    }
    return await _elicit(ctx, "Please select options from the enum fields", schema)


async def _elicit(ctx: ToolContext, message: str, schema: dict[str, object]) -> str:
    result = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
    return f"Elicitation completed: action={result.action}, content={json.dumps(result.content or {})}"


JSON_SCHEMA_2020_12 = "https://json-schema.org/draft/2020-12/schema"
address = create_model("address", street=(str | None, None), city=(str | None, None))
"""Named in lower case: the suite looks for `$defs.address`, and pydantic names a definition after its model."""


def json_schema_2020_12_tool(name: str | None = None, address: address | None = None) -> str:
    return f"name={name}, address={address}"


_schema_tool = registry.add(json_schema_2020_12_tool, description="Tool with JSON Schema 2020-12 features")
# toolwire's schemas are pydantic's, which are 2020-12 ($defs, $ref, additionalProperties: false from the argument
# model); the dialect is stated here because the scenario checks that a `$schema` keyword reaches tools/list whole.
_schema_tool.schema = {"$schema": JSON_SCHEMA_2020_12, **_schema_tool.schema}


@registry.tool(description="Tests SSE polling: answers on the POST stream (toolwire keeps no event store to resume)")
async def test_reconnection() -> str:
    return "Reconnection test completed successfully"


@registry.resource("test://static-text", name="static_text", mime_type="text/plain")
def static_text() -> str:
    """A static text resource for testing."""
    return "This is the content of the static text resource."


@registry.resource("test://static-binary", name="static_binary", mime_type="image/png")
def static_binary() -> bytes:
    """A static binary resource (a PNG) for testing."""
    return base64.b64decode(TEST_IMAGE_BASE64)


@registry.resource("test://watched-resource", name="watched_resource", mime_type="text/plain")
def watched_resource() -> str:
    """A resource to subscribe to."""
    return "Watched resource content"


@registry.resource_template("test://template/{id}/data", name="template_data", mime_type="application/json")
def template_data(id: str) -> str:
    """A resource template with one variable, {id}."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"}, separators=(",", ":"))


@registry.prompt(description="A simple prompt without arguments")
def test_simple_prompt() -> str:
    return "This is a simple prompt for testing."


@registry.prompt(description="A prompt with two required arguments", complete=lambda argument, partial: [])
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@registry.prompt(description="A prompt with an embedded resource")
def test_prompt_with_embedded_resource(resourceUri: str) -> list[object]:  # the suite names the argument so
    resource = types.TextResourceContents(
        uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
    )
    return [types.EmbeddedResource(type="resource", resource=resource), "Please process the embedded resource above."]


@registry.prompt(description="A prompt with an image")
def test_prompt_with_image() -> list[object]:
    return [_image(), "Please analyze the image above."]
