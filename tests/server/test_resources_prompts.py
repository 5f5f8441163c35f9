"""Prompts, resources, templates, subscriptions, completion and list-changed notifications, against the real tool
server as a subprocess: over stdio and over Streamable HTTP, in both protocol eras the SDK client speaks."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Literal

import mcp_types as types
import pytest
from mcp import Client, MCPError

from helpers.servers import HttpServer, http_client, stdio_params

SURFACE = "tests/server/surface.py:registry"
Mode = Literal["auto", "legacy"]
WAYS = [("stdio", "auto"), ("stdio", "legacy"), ("http", "auto"), ("http", "legacy")]


@pytest.fixture(scope="module")
def http_server() -> AsyncIterator[HttpServer]:
    with HttpServer(SURFACE) as running:
        yield running


@asynccontextmanager
async def connect(transport: str, mode: Mode, http_server: HttpServer) -> AsyncIterator[Client]:
    if transport == "stdio":
        async with Client(stdio_params(SURFACE), mode=mode, read_timeout_seconds=30) as client:
            yield client
    else:
        async with http_client(http_server.url, mode=mode) as client:
            yield client


@pytest.mark.parametrize(("transport", "mode"), WAYS)
async def test_prompts_list_and_get(transport: str, mode: Mode, http_server: HttpServer) -> None:
    async with connect(transport, mode, http_server) as client:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert set(prompts) == {"summarize", "greeting", "broken"}
        arguments = {a.name: (a.required, a.description) for a in prompts["summarize"].arguments or []}
        assert arguments == {"ticket": (True, "the ticket id"), "tone": (False, None)}
        assert prompts["greeting"].description == "A one-line greeting prompt."

        got = await client.get_prompt("summarize", {"ticket": "T-7", "tone": "friendly"})
        assert [(m.role, m.content.text) for m in got.messages] == [  # type: ignore[union-attr]
            ("user", "Summarize ticket T-7 in a friendly tone."),
            ("assistant", "Which details matter?"),
        ]
        plain = await client.get_prompt("greeting")
        assert plain.messages[0].content == types.TextContent(type="text", text="Say hello.")


@pytest.mark.parametrize(("transport", "mode"), WAYS)
async def test_prompt_mistakes_are_readable_errors(transport: str, mode: Mode, http_server: HttpServer) -> None:
    async with connect(transport, mode, http_server) as client:
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("summarize", {"tone": "curt"})
        assert missing.value.error.code == types.INVALID_PARAMS
        assert "missing required argument 'ticket'" in missing.value.error.message
        assert '{"name": "summarize", "arguments": {"ticket": "..."}}' in missing.value.error.message

        with pytest.raises(MCPError) as unknown:
            await client.get_prompt("nope")
        assert unknown.value.error.code == types.INVALID_PARAMS
        listing = "broken, greeting, summarize"
        assert unknown.value.error.message == f"unknown prompt 'nope'. Prompts on this server: {listing}."

        with pytest.raises(MCPError) as failed:
            await client.get_prompt("broken")
        assert failed.value.error.message == "prompt 'broken' failed: the prompt store is down"
