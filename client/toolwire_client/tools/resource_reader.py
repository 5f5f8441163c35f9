"""read_resource: the client's tool that lets the model read an MCP resource, offered once a server of the run
lists resources or a tool result links one (RunConfig.read_resources, `--no-read-resources` to opt out).

A URI is read only through the server that listed it or returned the link to it, by that server's own
`resources/read`: never from this machine's disk or network, whatever the scheme (`file:///etc/passwd` from a
server is that server's answer), and never from a server that did not offer it. A URI no server of the run offered
is a readable error naming the ones that can be read."""

import logging
import time

import mcp_types as types

from toolwire_client import texts
from toolwire_client.tools.source import ServerRequestFailed, ToolRequest, ToolSource, ToolTransportError
from toolwire_shared import errors
from toolwire_shared.media import MediaBudget, MediaKind, MediaPart
from toolwire_shared.results import ToolResult, embedded_text, failed
from toolwire_shared.tools import ToolPolicy, ToolSpec, closed_object

log = logging.getLogger("toolwire.client.resources")

TOOL = texts.RESOURCE_TOOL
SCHEMA = closed_object({"uri": {"type": "string", "description": texts.RESOURCE_URI_HELP}}, ["uri"])


class ResourceReader(ToolSource):
    """A ToolSource (the one tool `read_resource`) that watches links, over the run's other sources: listed
    when it starts, so it comes after them in the ToolBox."""

    name = TOOL
    watches_links = True
    # times_out_itself stays False: a resources/read crosses a process boundary, the ToolBox's backstop bounds it

    def __init__(self, sources: list[ToolSource]):
        self.sources = sources
        self.served: dict[str, ToolSource] = {}
        """URI -> the server that listed it, or (later, and winning) that returned a link to it."""
        self.listed: list[tuple[str, str]] = []
        """(URI, name or description) of each resource listed at the start, for the tool's description."""
        self.offered = False
        self.tools_changed = False
        """Set when the first link makes the tool worth offering: the ToolBox lists it again before the next step."""

    async def start(self) -> None:
        for source in self.sources:
            if not source.offers_resources:
                continue
            try:
                resources = await source.list_resources()
            except (ServerRequestFailed, ToolTransportError) as exc:
                log.warning("no resources listed from %s: %s", source.name, exc)
                continue
            for resource in resources:
                if resource.uri not in self.served:
                    self.served[resource.uri] = source
                    self.listed.append((resource.uri, resource.description or resource.title or resource.name))
        self.offered = bool(self.served)

    def linked(self, source: ToolSource, uris: list[str]) -> None:
        if not source.offers_resources:
            return
        for uri in uris:
            self.served[uri] = source
        if not self.offered:
            self.offered = self.tools_changed = True

    async def list_tools(self) -> list[ToolSpec]:
        if not self.offered:
            return []
        description = texts.resources_description(self.listed)
        return [ToolSpec(name=TOOL, description=description, input_schema=SCHEMA, policy=ToolPolicy(idempotent=True))]

    async def call(self, request: ToolRequest) -> ToolResult:
        started = time.perf_counter()
        call_id, name, arguments = request.call.id, request.call.name, request.call.arguments
        uri = arguments.get("uri")
        problems = [f"{key}: not an argument of {TOOL}" for key in arguments if key != "uri"]
        if not isinstance(uri, str) or not uri:
            problems.insert(0, "uri: a resource's URI (a string) is required")
        if problems or not isinstance(uri, str):
            return failed(call_id, name, "bad_arguments", errors.bad_arguments(TOOL, problems, SCHEMA), since=started)
        source = self.served.get(uri)
        if source is None:
            return failed(call_id, name, "bad_arguments", texts.unknown_resource_uri(uri, self.served), since=started)
        try:
            result = await source.read_resource(uri)
        except ServerRequestFailed as exc:
            return failed(call_id, name, "tool_failed", texts.resource_failed(uri, str(exc)), since=started)
        except ToolTransportError as exc:
            return failed(call_id, name, "transport", texts.resource_failed(uri, str(exc)), since=started)
        text, media = contents_read(result.contents)
        return ToolResult(
            call_id=call_id, name=name, content=text, media=media, duration_s=time.perf_counter() - started
        )


def contents_read(
    contents: list[types.TextResourceContents | types.BlobResourceContents],
) -> tuple[str, list[MediaPart]]:
    """A resources/read answer as the model reads it: each text as it is; an image or audio blob as media (with
    its line), any other blob described."""
    parts: list[str] = []
    media = MediaBudget()
    for content in contents:
        if isinstance(content, types.TextResourceContents):
            parts.append(content.text)
            continue
        mime = (content.mime_type or "").lower()
        kind: MediaKind | None = (
            "image" if mime.startswith("image/") else "audio" if mime.startswith("audio/") else None
        )
        if kind is None:
            parts.append(embedded_text(content))
            continue
        parts.append(media.line(kind, mime, content.blob))
    return "\n".join(parts), media.parts
