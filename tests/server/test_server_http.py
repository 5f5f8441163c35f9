"""The tool server under uvicorn on 127.0.0.1 (a real subprocess), driven by `mcp.Client` and raw HTTP."""

from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import anyio
import httpx2
import pytest

from helpers.servers import (
    TEST_TOOLS,
    HttpServer,
    check_client_cancel_stops_the_tool,
    http_client,
    text_of,
    tokens_file,
    wait_for_file,
)

MODES: list[Literal["auto", "legacy"]] = ["auto", "legacy"]
READER, ADMIN = "tok-reader-7f3a", "tok-admin-91c2"
READER_TOOLS = {"echo", "add", "big_text", "slow_sleep", "rendezvous"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    grants = {"reader": (READER, ["echo", "add", "big_*", "slow_sleep", "rendezvous"]), "admin": (ADMIN, ["*"])}
    tokens = tokens_file(tmp_path_factory.mktemp("access"), grants)
    with HttpServer(TEST_TOOLS, "--tokens", str(tokens), "--max-body-bytes", "8192") as running:
        yield running


@pytest.mark.parametrize("mode", MODES)
async def test_agents_see_and_call_only_their_tools(server: HttpServer, mode: Literal["auto", "legacy"]) -> None:
    async with http_client(server.url, token=READER, mode=mode) as reader:
        assert reader.session.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
        assert {t.name for t in (await reader.list_tools()).tools} == READER_TOOLS
        refused = await reader.call_tool("admin_only", {})
        assert refused.is_error and text_of(refused) == "ERROR: tool 'admin_only' is not permitted for agent 'reader'."
        unknown = await reader.call_tool("nope", {})
        assert "unknown tool 'nope'" in text_of(unknown) and "admin_only" not in text_of(unknown)
        assert text_of(await reader.call_tool("add", {"a": 1, "b": 2})) == "3"
        bad = await reader.call_tool("add", {"a": 1})
        assert bad.is_error and "missing required argument 'b'" in text_of(bad)
    async with http_client(server.url, token=ADMIN, mode=mode) as admin:
        names = {t.name for t in (await admin.list_tools()).tools}
        assert names > READER_TOOLS and "admin_only" in names and "boom" in names
        assert text_of(await admin.call_tool("admin_only", {})) == "admin"
        raised = await admin.call_tool("boom", {"message": "over http"})
        assert text_of(raised) == "ERROR: boom failed: over http"
    assert "refused: agent 'reader' called tool 'admin_only'" in server.stderr()


@pytest.mark.parametrize("token", [None, "tok-wrong"])
def test_missing_or_wrong_token_gets_a_readable_401(server: HttpServer, token: str | None) -> None:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    response = httpx2.post(server.url, json=body, headers=headers, timeout=10)
    assert response.status_code == 401
    message = response.json()["message"]
    assert ("no bearer token" in message) if token is None else ("not recognised" in message)
    assert "Authorization: Bearer <token>" in message
    assert response.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.parametrize(
    ("header", "value", "status"), [("Host", "evil.example:80", 421), ("Origin", "http://evil.example", 403)]
)
def test_foreign_host_or_origin_is_refused(server: HttpServer, header: str, value: str, status: int) -> None:
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {ADMIN}",
        header: value,
    }
    response = httpx2.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers, timeout=10)
    assert response.status_code == status
    assert response.text  # says why


def test_oversized_body_is_refused_with_413(server: HttpServer) -> None:
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {ADMIN}"}
    payload = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "y" * 20_000}},
    }
    response = httpx2.post(server.url, json=payload, headers=headers, timeout=10)
    assert response.status_code == 413
    assert "at most 8192" in response.json()["message"]


def test_healthz(server: HttpServer) -> None:
    response = httpx2.get(server.base + "/healthz", timeout=10)
    assert response.status_code == 200 and response.json()["status"] == "ok"


@pytest.mark.parametrize("mode", MODES)
async def test_fifty_concurrent_calls_on_one_connection(server: HttpServer, mode: Literal["auto", "legacy"]) -> None:
    results: list[str] = []
    async with http_client(server.url, token=READER, mode=mode) as client:

        async def one() -> None:
            result = await client.call_tool("rendezvous", {"group": f"http-{mode}", "count": 50})
            results.append("error: " + text_of(result) if result.is_error else text_of(result))

        async with anyio.create_task_group() as tg:
            for _ in range(50):
                tg.start_soon(one)
    assert len(results) == 50 and all(r == "50" for r in results), results[:3]


@pytest.mark.parametrize("mode", MODES)
async def test_client_cancel_stops_the_tool(
    server: HttpServer, mode: Literal["auto", "legacy"], tmp_path: Path
) -> None:
    async with http_client(server.url, token=READER, mode=mode) as client:
        await check_client_cancel_stops_the_tool(client, tmp_path)


@pytest.mark.parametrize("mode", MODES)
async def test_client_going_away_stops_the_tool(
    server: HttpServer, mode: Literal["auto", "legacy"], tmp_path: Path
) -> None:
    marker = tmp_path / "gone"
    async with anyio.create_task_group() as tg:

        async def call_then_vanish() -> None:
            async with http_client(server.url, token=READER, mode=mode) as client:
                await client.call_tool("slow_sleep", {"seconds": 60, "marker": str(marker)})

        tg.start_soon(call_then_vanish)
        await wait_for_file(tmp_path / "gone.started")
        tg.cancel_scope.cancel()  # closes the HTTP connection with the call in flight
    await wait_for_file(tmp_path / "gone.cancelled")
    assert not (tmp_path / "gone.finished").exists()
