"""HTTP under abuse: a session is bound to the token that opened it (another token gets a readable 403); a token
flooding sessions closes its own oldest idle ones (429 when all are busy) and never locks another agent out; a
client that stalls its headers or its body is cut off while the others are served."""

import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

from faults.harness import FAULT_TOOLS, INITIALIZE
from helpers.servers import HttpServer, http_client, text_of

A, B = "tok-agent-a-1d9f", "tok-agent-b-77c2"
PER_AGENT, IN_ALL = 4, 8
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
LEGACY = {"mcp-protocol-version": "2025-11-25"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    tokens = tmp_path_factory.mktemp("access") / "tokens.toml"
    tokens.write_text(f'[agents.a]\ntoken = "{A}"\ntools = ["*"]\n[agents.b]\ntoken = "{B}"\ntools = ["*"]\n')
    limits = ["--max-sessions", str(IN_ALL), "--max-sessions-per-agent", str(PER_AGENT)]
    timeouts = ["--header-timeout", "1", "--body-timeout", "1"]
    with HttpServer(FAULT_TOOLS, "--tokens", str(tokens), *limits, *timeouts, "--log-level", "INFO") as running:
        yield running


async def open_session(http: httpx2.AsyncClient, url: str, token: str) -> httpx2.Response:
    """A legacy `initialize` POST without a session id: the request that opens a session."""
    return await http.post(url, json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": f"Bearer {token}"})


async def in_session(http: httpx2.AsyncClient, url: str, token: str, session: str, message: dict[str, Any]) -> int:
    headers = {**MCP_HEADERS, **LEGACY, "Authorization": f"Bearer {token}", "mcp-session-id": session}
    return (await http.post(url, json=message, headers=headers)).status_code


async def list_tools(http: httpx2.AsyncClient, url: str, token: str, session: str) -> int:
    return await in_session(http, url, token, session, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})


async def test_another_token_cannot_use_a_session(server: HttpServer) -> None:
    async with httpx2.AsyncClient(timeout=20) as http:
        opened = await open_session(http, server.url, A)
        session = opened.headers["mcp-session-id"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert await in_session(http, server.url, A, session, initialized) == 202
        headers = {**MCP_HEADERS, **LEGACY, "Authorization": f"Bearer {B}", "mcp-session-id": session}
        hijack = await http.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers)
        assert hijack.status_code == 403
        assert hijack.json() == {
            "error": "forbidden",
            "message": "this Mcp-Session-Id belongs to a session another agent opened; a session is bound to the "
            "token that opened it. Open your own session (initialize) with your token.",
        }
        assert await list_tools(http, server.url, A, session) == 200  # its own agent still uses it
        assert await list_tools(http, server.url, B, "f" * 32) == 404  # an unknown id: the SDK's 404
    assert "403: agent 'b' used session" in server.stderr()


async def test_a_session_flood_from_one_token_does_not_lock_another_out(server: HttpServer) -> None:
    flood = 3 * PER_AGENT
    async with httpx2.AsyncClient(timeout=20) as http:
        sessions = []
        for _ in range(flood):
            opened = await open_session(http, server.url, A)
            assert opened.status_code == 200, opened.text
            sessions.append(opened.headers["mcp-session-id"])
        statuses = [await list_tools(http, server.url, A, s) for s in sessions]
        assert statuses == [404] * (flood - PER_AGENT) + [200] * PER_AGENT  # its own oldest idle ones were closed
    async with http_client(server.url, token=B, mode="legacy") as other:
        assert text_of(await other.call_tool("echo", {"text": "still in"})) == "still in"
    assert f"agent 'a' is at its cap of {PER_AGENT}" in server.stderr()


async def test_a_token_whose_sessions_are_all_busy_gets_a_readable_429(server: HttpServer) -> None:
    async with httpx2.AsyncClient(timeout=20) as http, AsyncExitStack() as streams:
        for _ in range(PER_AGENT):  # each session holds an open GET stream: busy, so never closed for a new one
            session = (await open_session(http, server.url, A)).headers["mcp-session-id"]
            await streams.enter_async_context(listening(http, server.url, A, session))
        refused = await open_session(http, server.url, A)
        assert refused.status_code == 429
        assert refused.json()["message"].startswith(f"agent 'a' has {PER_AGENT} sessions open and none of them is idle")
        async with http_client(server.url, token=B, mode="legacy") as other:
            assert text_of(await other.call_tool("echo", {"text": "served"})) == "served"


@asynccontextmanager
async def listening(http: httpx2.AsyncClient, url: str, token: str, session: str) -> AsyncIterator[None]:
    """The session's GET stream (server-to-client messages), open until the block ends."""
    headers = {"Accept": "text/event-stream", **LEGACY, "Authorization": f"Bearer {token}", "mcp-session-id": session}
    async with http.stream("GET", url, headers=headers) as response:
        assert response.status_code == 200
        yield


def stalled(port: int, head: bytes) -> socket.socket:
    """A connection that sends `head` and then nothing more."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
    sock.sendall(head)
    return sock


def answer_then_close(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (the 20 s socket timeout bounds the wait)."""
    chunks = []
    with sock:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


async def test_slow_clients_are_cut_off_and_others_are_served(server: HttpServer, tmp_path: Path) -> None:
    host = f"Host: 127.0.0.1:{server.port}\r\n".encode()
    auth = f"Authorization: Bearer {A}\r\n".encode()
    no_body = stalled(
        server.port,
        b"POST /mcp HTTP/1.1\r\n" + host + auth + b"Content-Type: application/json\r\nContent-Length: 500\r\n\r\n{",
    )
    half_headers = stalled(server.port, b"POST /mcp HTTP/1.1\r\n" + host + b"Content-")
    silent = stalled(server.port, b"")
    async with http_client(server.url, token=B) as other:  # served while the three connections stall
        assert text_of(await other.call_tool("echo", {"text": "meanwhile"})) == "meanwhile"
    assert httpx2.get(server.base + "/healthz", timeout=10).status_code == 200

    body_cut = answer_then_close(no_body)
    assert body_cut.startswith(b"HTTP/1.1 408 "), body_cut[:200]
    assert b'"message": "the request body did not arrive within 1 s of its headers' in body_cut
    assert answer_then_close(half_headers) == b""
    assert answer_then_close(silent) == b""
    said = server.stderr()
    assert "408 for POST /mcp: the body took over 1 s" in said
    assert said.count("its request headers took over 1 s") >= 2


def test_a_request_head_over_its_bound_is_refused_in_one_piece_or_many(server: HttpServer) -> None:
    """uvicorn's httptools protocol has no bound of its own (its parser buffers a header line that never ends):
    ours refuses a head over 16 KiB with a readable 431 and closes, whether it comes at once or in pieces."""
    start = b"GET /healthz HTTP/1.1\r\n" + f"Host: 127.0.0.1:{server.port}\r\n".encode()
    at_once = answer_then_close(stalled(server.port, start + b"X-Pad: " + b"a" * 20_000))  # a line never ended
    assert at_once.startswith(b"HTTP/1.1 431 "), at_once[:200]
    assert b"the request line and headers are over 16384 bytes; this server accepts at most 16384" in at_once
    pieces = stalled(server.port, start)
    for n in range(17):  # the 17th crosses the bound: nothing is sent after it, so the answer is not reset
        pieces.sendall(f"X-Pad-{n:02}: ".encode() + b"a" * 987 + b"\r\n")
    in_pieces = answer_then_close(pieces)
    assert in_pieces.startswith(b"HTTP/1.1 431 "), in_pieces[:200]
    assert server.stderr().count("request head is over 16384 bytes") >= 2
    under = httpx2.get(server.base + "/healthz", headers={"X-Pad": "a" * 15_000}, timeout=10)
    assert under.status_code == 200  # a long head under the bound is served
