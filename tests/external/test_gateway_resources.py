"""server-everything's resources (npm, pinned) through `toolwire serve --config`: listed and read as
`everything+<its URI>` in both protocol eras, its templates too; the resource links and embedded resources its tools
return point to URIs readable here; a grant for its static documents only hides the rest, a `..` included."""

import base64
from pathlib import Path

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from external.servers import needs, npm_server
from helpers.server_config import server_toml
from helpers.servers import HttpServer, http_client

EVERYTHING = npm_server("server-everything")
STATIC = "everything+demo://resource/static/document/"


def _config(folder: Path) -> Path:
    path = folder / "server.toml"
    agents = {"ops": ("tok-ops", ["everything__*", "everything+*"]), "docs": ("tok-docs", [f"{STATIC}*"])}
    path.write_text(server_toml(agents=agents, upstreams={"everything": [*EVERYTHING, "stdio"]}))
    return path


@pytest.mark.node
@needs(EVERYTHING)
async def test_everythings_resources_through_the_gateway(tmp_path: Path) -> None:
    with HttpServer("tests/server/policy_tools.py:registry", f"--config={_config(tmp_path)}") as server:
        async with http_client(server.url, token="tok-ops") as ops:  # 2026-07-28 era
            uris = [r.uri for r in (await ops.list_resources()).resources]
            assert uris and all(u.startswith("everything+demo://resource/") for u in uris), uris
            documents = [u for u in uris if u.startswith(STATIC)]
            assert documents, uris
            document = (await ops.read_resource(documents[0])).contents[0]
            assert document.uri == documents[0] and isinstance(document, types.TextResourceContents) and document.text
            templates = {t.uri_template for t in (await ops.list_resource_templates()).resource_templates}
            assert "everything+demo://resource/dynamic/text/{resourceId}" in templates, templates
            dynamic = (await ops.read_resource("everything+demo://resource/dynamic/text/2")).contents[0]
            assert dynamic.uri == "everything+demo://resource/dynamic/text/2"

            linked = await ops.call_tool("everything__get-resource-links", {"count": 2})
            links = [block for block in linked.content if isinstance(block, types.ResourceLink)]
            assert [link.uri for link in links] == [
                "everything+demo://resource/dynamic/blob/1",
                "everything+demo://resource/dynamic/text/2",
            ]
            blob = (await ops.read_resource(links[0].uri)).contents[0]
            assert isinstance(blob, types.BlobResourceContents) and base64.b64decode(blob.blob)
            referenced = await ops.call_tool(
                "everything__get-resource-reference", {"resourceType": "Text", "resourceId": 3}
            )
            embedded = [block for block in referenced.content if isinstance(block, types.EmbeddedResource)]
            assert [e.resource.uri for e in embedded] == ["everything+demo://resource/dynamic/text/3"]

        async with http_client(server.url, token="tok-docs", mode="legacy") as docs:  # the handshake era
            assert sorted(r.uri for r in (await docs.list_resources()).resources) == sorted(documents)
            assert (await docs.list_resource_templates()).resource_templates == []
            assert (await docs.read_resource(documents[0])).contents[0].uri == documents[0]
            for hostile in [
                "everything+demo://resource/dynamic/text/2",
                STATIC + "../../dynamic/text/2",
                "demo://resource/dynamic/text/2",
            ]:
                with pytest.raises(MCPError, match="unknown resource"):
                    await docs.read_resource(hostile)
