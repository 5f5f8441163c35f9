"""`ctx.require_client(...)` (functions/needs.py): a tool that needs the client's model refuses a client that did
not declare sampling with error -32021 naming it, in either era over HTTP, and runs for one that did. (The
2026-07-28 envelope's own checks, and HTTP 400 for the refusal: server-stateless in test_tasks_node.py.)"""

from collections.abc import Iterator
from typing import Any, Literal

import httpx2
import mcp_types as types
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from helpers.servers import HttpServer, http_client, text_of

ERAS: list[Literal["auto", "legacy"]] = ["auto", "legacy"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    env = {"TOOLWIRE_TASK_STORE": str(tmp_path_factory.mktemp("tasks") / "tasks.sqlite")}
    with HttpServer("examples.conformance_tasks:registry", env=env) as running:
        yield running


@pytest.mark.parametrize("mode", ERAS)
async def test_a_client_without_sampling_is_refused_with_what_it_lacks(
    server: HttpServer, mode: Literal["auto", "legacy"]
) -> None:
    async with http_client(server.url, mode=mode) as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("test_missing_capability", {})
    assert refused.value.error.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert refused.value.error.data == {"requiredCapabilities": {"sampling": {}}}
    assert "needs the client's sampling" in refused.value.error.message


@pytest.mark.parametrize("mode", ERAS)
async def test_a_client_that_declared_sampling_is_served(server: HttpServer, mode: Literal["auto", "legacy"]) -> None:
    async def sample(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        return types.CreateMessageResult(role="assistant", content=types.TextContent(text="-"), model="none")

    async with (
        httpx2.AsyncClient(timeout=30) as http,
        Client(streamable_http_client(server.url, http_client=http), mode=mode, sampling_callback=sample) as client,
    ):
        result = await client.call_tool("test_missing_capability", {})
    assert not result.is_error and text_of(result) == "the client can sample"
