"""The HTTP fast path for modern-era tools/call (server/toolwire_server/transports/fast_http.py): the same answers as
the SDK path for raw POSTs (every outcome, a grant refusal, a bad routing header), a call cancelled when its
client goes away, and the SDK client (both eras) served as before."""

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.server.streamable_http import check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware
from starlette.requests import Request

from helpers.mcp_http import MCP_HEADERS, initialize
from helpers.polling import await_until
from helpers.servers import TEST_TOOLS, HttpServer, http_client, text_of, tokens_file
from toolwire_server.transports.fast_http import ACCEPT_BOTH
from toolwire_server.transports.fast_path import FAST_PATH_OFF_ENV

READER, ADMIN = "tok-fast-reader", "tok-fast-admin"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
FAST_LINE = "on the fast path"


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HttpServer, HttpServer]]:
    grants = {"reader": (READER, ["echo", "add", "boom", "big_*", "slow_sleep", "order"]), "admin": (ADMIN, ["*"])}
    tokens = tokens_file(tmp_path_factory.mktemp("access"), grants)
    args = ("--tokens", str(tokens), "--max-result-chars", "100", "--log-level", "DEBUG")
    with (
        HttpServer(TEST_TOOLS, *args, env={FAST_PATH_OFF_ENV: "0"}) as fast,
        HttpServer(TEST_TOOLS, *args, env={FAST_PATH_OFF_ENV: "1"}) as slow,
    ):
        yield fast, slow


def _post(url: str, name: str, arguments: dict[str, Any], *, token: str = READER, **headers: str) -> httpx2.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": META},
    }
    sent = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
        **headers,
    }
    return httpx2.post(url, content=json.dumps(body), headers=sent, timeout=30)


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("echo", {"text": "hi"}),
    ("order", {"order_id": "A7"}),
    ("add", {"a": -1, "b": 2}),
    ("boom", {"message": "no"}),
    ("big_text", {"n": 500}),
    ("admin_only", {}),  # outside the reader's grant
    ("nope", {}),
]


def test_raw_posts_get_the_answers_the_sdk_path_gives(servers: tuple[HttpServer, HttpServer]) -> None:
    fast, slow = servers
    before = fast.stderr().count(FAST_LINE)
    for name, arguments in CALLS:
        a, b = _post(fast.url, name, arguments), _post(slow.url, name, arguments)
        assert (a.status_code, a.headers["content-type"]) == (b.status_code, b.headers["content-type"]), name
        assert a.json() == b.json(), name
    refused = _post(fast.url, "admin_only", {}).json()["result"]
    assert refused["isError"] and refused["_meta"]["io.toolwire/error_kind"] == "refused"
    assert fast.stderr().count(FAST_LINE) - before == len(CALLS) + 1
    assert FAST_LINE not in slow.stderr()


def test_a_routing_header_that_disagrees_with_the_body_is_refused_as_by_the_sdk(
    servers: tuple[HttpServer, HttpServer],
) -> None:
    fast, slow = servers
    before = fast.stderr().count(FAST_LINE)
    a = _post(fast.url, "echo", {"text": "x"}, **{"Mcp-Name": "add"})
    b = _post(slow.url, "echo", {"text": "x"}, **{"Mcp-Name": "add"})
    assert a.status_code == b.status_code and a.json() == b.json() and "error" in a.json()
    assert fast.stderr().count(FAST_LINE) == before


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_sdk_client_in_either_era_is_served(servers: tuple[HttpServer, HttpServer], mode: Any) -> None:
    fast, _ = servers
    async with http_client(fast.url, token=READER, mode=mode) as client:
        echoed = await client.call_tool("echo", {"text": f"via {mode}"})
        order = await client.call_tool("order", {"order_id": "B1"})
    assert text_of(echoed) == f"via {mode}" and order.structured_content == {"id": "B1", "total": 42}


ELSEWHERE = """
import logging, sys, uvicorn
from toolwire_server.auth.access import load_access
from toolwire_server.tools.loading import load_registry
from toolwire_server.transports.http import http_app
logging.basicConfig(level=logging.INFO)
port = int(sys.argv[1])
app = http_app(load_registry(sys.argv[2]), access=load_access(sys.argv[3]), port=port)
uvicorn.run(app, host="127.0.0.1", port=port, http="h11", log_level="warning")
"""
"""`http_app` under plain uvicorn (its h11 protocol, not ours: no Connection in the scope), as a user may run it."""


@pytest.fixture(scope="module")
def elsewhere(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    tokens = tokens_file(tmp_path_factory.mktemp("access"), {"reader": (READER, ["slow_sleep"])})
    server = HttpServer(TEST_TOOLS)
    server.argv = [sys.executable, "-c", ELSEWHERE, str(server.port), TEST_TOOLS, str(tokens)]
    with server as running:
        yield running


@pytest.mark.parametrize("where", ["our server", "another ASGI server"])
async def test_a_client_that_goes_away_cancels_its_call(
    servers: tuple[HttpServer, HttpServer], elsewhere: HttpServer, tmp_path: Path, where: str
) -> None:
    """Our server's protocol says when the client is gone; under another, a task waits for the disconnect."""
    fast = servers[0] if where == "our server" else elsewhere
    marker = str(tmp_path / "gone")
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "slow_sleep", "arguments": {"seconds": 30, "marker": marker}, "_meta": META},
    }
    headers = {
        "Authorization": f"Bearer {READER}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "slow_sleep",
    }
    async with httpx2.AsyncClient(timeout=30) as http:
        request = http.build_request("POST", fast.url, content=json.dumps(body), headers=headers)
        async with anyio.create_task_group() as group:
            group.start_soon(_drive, http.send(request))
            await await_until(lambda: Path(marker + ".started").exists(), "the sleep to start")
            group.cancel_scope.cancel()  # drops the connection mid-call
    await await_until(lambda: Path(marker + ".cancelled").exists(), "the call to be cancelled")
    # the tool's marker is written as it is cancelled, the server's line after: wait for it, do not race it
    await await_until(lambda: "cancelled (client went away)" in fast.stderr(), "the server to log the cancel")


async def _drive(awaitable: Any) -> None:
    await awaitable


def _handshake_session(url: str) -> dict[str, str]:
    """A handshake-era session's headers (initialize, then initialized), as the reader."""
    headers = {"Authorization": f"Bearer {READER}", **MCP_HEADERS}
    opened = httpx2.post(url, content=json.dumps(initialize("routing")), headers=headers, timeout=30)
    headers |= {"Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert httpx2.post(url, content=json.dumps(done), headers=headers, timeout=30).status_code == 202
    return headers


@pytest.mark.parametrize(
    "lie",
    [
        {"Mcp-Method": "tools/list"},
        {"Mcp-Method": "TOOLS/CALL"},
        {"Mcp-Name": "echo"},
        {"Mcp-Name": "=?base64?ZWNobw==?="},
    ],
)
def test_a_routing_header_that_lies_about_the_body_is_refused_and_the_tool_never_runs(
    servers: tuple[HttpServer, HttpServer], tmp_path: Path, lie: dict[str, str]
) -> None:
    """A gateway allowing `echo` by its Mcp-Name must not let a slow_sleep through, in either era, on either path."""
    fast, slow = servers
    for n, server in enumerate((fast, slow)):
        marker = str(tmp_path / f"modern{n}")
        refused = _post(server.url, "slow_sleep", {"seconds": 0, "marker": marker}, **lie)
        assert refused.status_code == 400 and refused.json()["error"]["code"] == -32020, refused.text
        assert refused.json()["id"] == 7
        session = _handshake_session(server.url)
        body = {"jsonrpc": "2.0", "id": 8, "method": "tools/call"}
        body["params"] = {"name": "slow_sleep", "arguments": {"seconds": 0, "marker": marker}}
        legacy = httpx2.post(server.url, content=json.dumps(body), headers={**session, **lie}, timeout=30)
        assert legacy.status_code == 400, legacy.text
        assert legacy.json() == {"jsonrpc": "2.0", "id": 8, "error": legacy.json()["error"]}
        assert legacy.json()["error"]["code"] == -32020 and "does not match" in legacy.json()["error"]["message"]
        assert not Path(marker + ".started").exists()
        honest = {"Mcp-Method": "tools/call", "Mcp-Name": "slow_sleep"}
        ran = httpx2.post(server.url, content=json.dumps(body), headers={**session, **honest}, timeout=30)
        assert ran.status_code == 200 and Path(marker + ".started").exists(), ran.text


async def test_the_content_headers_the_fast_path_takes_unparsed_are_ones_the_sdk_takes() -> None:
    for accept in ACCEPT_BOTH:
        headers = [(b"accept", accept.encode()), (b"content-type", b"application/json")]
        request = Request({"type": "http", "method": "POST", "headers": headers})
        assert check_accept_headers(request)[0], accept
        assert await TransportSecurityMiddleware().validate_request(request, is_post=True) is None
