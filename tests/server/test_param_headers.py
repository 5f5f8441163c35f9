"""A tool parameter mirrored into an `Mcp-Param-*` header (SEP-2243, `x-mcp-header` in its schema): a valid one is
listed as declared, one clients would drop (so the tool would be offered to nobody) is refused at registration;
over HTTP toolwire's client calls such a tool in either era (in 2026-07-28 with the header, base64 when the value is
not plain ASCII, which the server checks), and a header unlike the argument is refused before the tool runs."""

import json
from collections.abc import Iterator
from typing import Annotated, Literal

import httpx2
import pytest
from pydantic import Field

from helpers.mcp_http import MCP_HEADERS
from helpers.servers import HttpServer
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.source import RunContext
from toolwire_client.tools.toolbox import ToolBox
from toolwire_server import Registry
from toolwire_shared.messages import ToolCall

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _header(token: object) -> object:
    return Field(json_schema_extra={"x-mcp-header": token})


def test_a_header_parameter_is_listed_with_its_annotation() -> None:
    registry = Registry("headers")

    @registry.tool(description="Routes by region.")
    async def route(region: Annotated[str, _header("Region")], body: str = "") -> str:
        return region

    assert registry.get("route").schema["properties"]["region"]["x-mcp-header"] == "Region"


@pytest.mark.parametrize(
    ("annotation", "why"),
    [
        (Annotated[float, _header("Amount")], "only permitted on integer/string/boolean"),
        (Annotated[str, _header("Bad Token")], "not an RFC 9110 token"),
        (Annotated[str, _header(7)], "must be a string"),
    ],
)
def test_a_header_clients_would_drop_is_refused_at_registration(annotation: object, why: str) -> None:
    registry = Registry("headers")

    async def route(region: str) -> str:
        return region

    route.__annotations__["region"] = annotation
    with pytest.raises(ValueError, match=f"tool 'route': property 'region': x-mcp-header .*{why}"):
        registry.add(route, description="Routes by region.")
    assert registry.get("route") is None


def test_two_parameters_cannot_share_a_header() -> None:
    registry = Registry("headers")

    async def route(region: Annotated[str, _header("Where")], zone: Annotated[str, _header("where")]) -> str:
        return region + zone

    with pytest.raises(ValueError, match="duplicates property"):
        registry.add(route, description="Routes by region.")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    env = {"TOOLWIRE_TASK_STORE": str(tmp_path_factory.mktemp("tasks") / "tasks.sqlite")}
    with HttpServer("examples.conformance_tasks:registry", env=env) as running:
        yield running


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_toolwire_s_client_sends_the_header_the_schema_declares(
    server: HttpServer, mode: Literal["auto", "legacy"]
) -> None:
    async with ToolBox([McpSource("conformance", url=server.url, mode=mode)]) as box:
        call = ToolCall(id="c1", name="region_status", arguments={"region": "eu-west ü"})
        result = await box.call(call, RunContext("r"))
    assert not result.is_error and result.content == "region eu-west ü: ok"


@pytest.mark.parametrize(
    ("header", "why"),
    [
        ({"Mcp-Param-Region": "us-east"}, "does not match the request body's 'region' argument"),
        ({}, "header is missing but the request body's 'region' argument is present"),
        ({"Mcp-Param-Region": "=?base64?ZXUtd2VzdA?="}, "malformed base64"),
    ],
)
def test_a_param_header_unlike_its_argument_is_refused(server: HttpServer, header: dict[str, str], why: str) -> None:
    body = {"jsonrpc": "2.0", "id": 3, "method": "tools/call"}
    body["params"] = {"name": "region_status", "arguments": {"region": "eu-west"}, "_meta": META}
    routing = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "region_status"}
    sent = httpx2.post(server.url, content=json.dumps(body), headers={**MCP_HEADERS, **routing, **header}, timeout=30)
    assert sent.status_code == 400 and sent.json()["error"]["code"] == -32020, sent.text
    assert why in sent.json()["error"]["message"] and sent.json()["id"] == 3
