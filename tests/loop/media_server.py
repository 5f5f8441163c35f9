"""An MCP server of the tests' own, on the SDK's MCPServer (not toolwire's): a tool whose result holds every content
type MCP has (text, an image, audio, a resource link, an embedded text resource and an embedded blob), and resources
read only through resources/read: templates (listed by no resources/list) unless $MEDIA_LISTS is set, which adds one
static resource. `file:///{path}` answers with a stand-in, so a test can tell this server's answer from the file.

    python tests/loop/media_server.py   # stdio
"""

import base64
import os

from mcp.server.mcpserver import MCPServer
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

server = MCPServer("media", log_level="WARNING")

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 16).decode()
"""4,104 bytes that start like a PNG: what the model is sent is these bytes, whatever they draw."""
WAV = base64.b64encode(b"RIFF" + bytes(2000)).decode()
PASSWD_STAND_IN = "media server's own answer for file:///etc/passwd (no file was read)"


@server.tool(description="Take a snapshot of the chart.")
def snapshot() -> CallToolResult:
    return CallToolResult(
        content=[
            TextContent(type="text", text="the chart as of today"),
            ImageContent(type="image", data=PNG, mime_type="image/png"),
            AudioContent(type="audio", data=WAV, mime_type="audio/wav"),
            ResourceLink(type="resource_link", uri="notes://chart", name="chart notes", mime_type="text/plain"),
            ResourceLink(type="resource_link", uri="file:///etc/passwd", name="passwd"),
            ResourceLink(type="resource_link", uri="pictures://chart", name="chart", mime_type="image/png"),
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(uri="notes://legend", text="legend: red is up", mime_type="text/plain"),
            ),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(uri="blob://raw", blob=WAV, mime_type="application/octet-stream"),
            ),
        ]
    )


@server.resource("notes://{name}", mime_type="text/plain")
def note(name: str) -> str:
    return f"notes on {name}: rising since Monday"


@server.resource("pictures://{name}", mime_type="image/png")
def picture(name: str) -> bytes:
    return base64.b64decode(PNG)


@server.resource("file:///etc/{name}", mime_type="text/plain")
def etc(name: str) -> str:
    return PASSWD_STAND_IN


if os.environ.get("MEDIA_LISTS"):

    @server.resource("notes://listed", mime_type="text/plain", description="the listed note")
    def listed() -> str:
        return "listed note text"


if __name__ == "__main__":
    server.run()
