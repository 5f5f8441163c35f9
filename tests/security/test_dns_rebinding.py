"""DNS rebinding (issue 21, item 1): a web page whose name resolves to this machine must not reach the tools. A real
`toolwire serve --http` on 127.0.0.1 (and one bound to 0.0.0.0, contacted only through 127.0.0.1) answers a request
whose Host is not one of its own names with 421, and one from a foreign web page (Origin) with 403, on every path: the
fast path, the SDK path, a handshake-era session (of a --replica), GET/DELETE, /healthz and `--workers 2`; the tool
never runs."""

import json
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from helpers.servers import TEST_TOOLS, HttpServer
from toolwire_server.transports.fast_path import FAST_PATH_OFF_ENV

EVIL = "evil.example"
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def loopback() -> Iterator[dict[str, HttpServer]]:
    """The default bind (127.0.0.1, no tokens): with the fast path (as a named --replica, whose session ids the
    handshake-era test sees), and with every request through the SDK."""
    with (
        HttpServer(TEST_TOOLS, "--replica", "r1", env={FAST_PATH_OFF_ENV: "0"}) as fast,
        HttpServer(TEST_TOOLS, env={FAST_PATH_OFF_ENV: "1"}) as sdk,
    ):
        yield {"fast": fast, "sdk": sdk}


@pytest.fixture(scope="module", params=["fast", "sdk"])
def server(request: pytest.FixtureRequest, loopback: dict[str, HttpServer]) -> HttpServer:
    return loopback[request.param]


def call(server: HttpServer, tmp_path: Path, *, host: str | None = None, **headers: str) -> httpx2.Response:
    """A plain 2026-07-28 tools/call of slow_sleep (0 s), which leaves `tmp_path`/run.started when it runs."""
    arguments = {"seconds": 0, "marker": str(tmp_path / "run")}
    params = {"name": "slow_sleep", "arguments": arguments, "_meta": META}
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    routing = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "slow_sleep"}
    sent = {**ACCEPT, **routing, "Host": host or f"127.0.0.1:{server.port}", **headers}
    return httpx2.post(server.url, content=json.dumps(body), headers=sent, timeout=30)


def ran(tmp_path: Path) -> bool:
    return (tmp_path / "run.started").exists()


def refusal(response: httpx2.Response, status: int) -> str:
    """The readable JSON message of a refusal with `status`."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    message: str = response.json()["message"]
    return message


def test_a_foreign_host_is_refused_and_the_tool_does_not_run(server: HttpServer, tmp_path: Path) -> None:
    message = refusal(call(server, tmp_path, host=f"{EVIL}:{server.port}"), 421)
    assert f"--allowed-host {EVIL}:{server.port}" in message
    assert not ran(tmp_path)
    assert call(server, tmp_path).status_code == 200 and ran(tmp_path)  # the same call, by this machine's name, runs
    assert f"421 for POST /mcp: Host '{EVIL}:{server.port}'" in server.stderr()


@pytest.mark.parametrize("origin", [f"http://{EVIL}", "http://127.0.0.1:1", "null"])
def test_a_foreign_origin_is_refused(server: HttpServer, tmp_path: Path, origin: str) -> None:
    message = refusal(call(server, tmp_path, Origin=origin), 403)
    assert "--allowed-origin" in message if origin != "null" else "never" in message
    assert not ran(tmp_path)


@pytest.mark.parametrize("origin", [None, "http://127.0.0.1:{port}", "http://localhost:{port}"])
def test_no_origin_or_this_servers_own_is_served(server: HttpServer, tmp_path: Path, origin: str | None) -> None:
    headers = {} if origin is None else {"Origin": origin.format(port=server.port)}
    assert call(server, tmp_path, **headers).json()["result"]["content"][0]["text"] == "slept"


def test_a_handshake_era_session_refuses_a_foreign_host(loopback: dict[str, HttpServer], tmp_path: Path) -> None:
    server = loopback["fast"]
    good = {**ACCEPT, "Host": f"127.0.0.1:{server.port}"}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    evil = {**good, "Host": f"{EVIL}:{server.port}"}
    assert f"--allowed-host {EVIL}:{server.port}" in refusal(httpx2.post(server.url, json=init, headers=evil), 421)
    opened = httpx2.post(server.url, json=init, headers=good, timeout=30)
    assert opened.status_code == 200
    assert opened.headers["mcp-session-id"].startswith("r1.")
    session = {"Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert httpx2.post(server.url, json=initialized, headers={**good, **session}, timeout=30).status_code == 202
    arguments = {"seconds": 0, "marker": str(tmp_path / "run")}
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow_sleep", "arguments": arguments}}
    refusal(httpx2.post(server.url, json=body, headers={**evil, **session}, timeout=30), 421)
    for method in ("GET", "DELETE"):
        refusal(httpx2.request(method, server.url, headers={**evil, **session}, timeout=30), 421)
    assert not ran(tmp_path)
    assert httpx2.delete(server.url, headers={**good, **session}, timeout=30).status_code == 200  # still open


def test_healthz_answers_only_this_servers_names(loopback: dict[str, HttpServer]) -> None:
    server = loopback["fast"]
    assert httpx2.get(server.base + "/healthz", timeout=10).status_code == 200
    refusal(httpx2.get(server.base + "/healthz", headers={"Host": EVIL}, timeout=10), 421)


@pytest.fixture(scope="module")
def wildcard() -> Iterator[dict[str, HttpServer]]:
    """Bound to 0.0.0.0 (contacted only through 127.0.0.1): by default, and with --allowed-host evil.example:PORT."""
    plain = HttpServer(TEST_TOOLS, "--host", "0.0.0.0")
    allowing = HttpServer(TEST_TOOLS, "--host", "0.0.0.0")
    allowing.argv += ["--allowed-host", f"{EVIL}:{allowing.port}"]
    with plain, allowing:
        yield {"plain": plain, "allowing": allowing}


def test_a_wildcard_bind_answers_its_own_names_and_refuses_others(
    wildcard: dict[str, HttpServer], tmp_path: Path
) -> None:
    server = wildcard["plain"]
    for host in (f"127.0.0.1:{server.port}", f"localhost:{server.port}"):
        assert call(server, tmp_path, host=host).status_code == 200, host
    message = refusal(call(server, tmp_path / "no", host=f"{EVIL}:{server.port}"), 421)
    assert f"--allowed-host {EVIL}:{server.port}" in message


def test_allowed_host_adds_a_name(wildcard: dict[str, HttpServer], tmp_path: Path) -> None:
    server = wildcard["allowing"]
    named = f"{EVIL}:{server.port}"
    assert call(server, tmp_path, host=named, Origin=f"http://{named}").status_code == 200 and ran(tmp_path)
    assert call(server, tmp_path, host=f"127.0.0.1:{server.port}").status_code == 200  # the defaults stay
    refusal(call(server, tmp_path, host=f"{EVIL}:{server.port + 1}"), 421)


def test_workers_refuse_a_foreign_host(tmp_path: Path) -> None:
    with HttpServer(TEST_TOOLS, "--workers", "2") as server:
        refusal(call(server, tmp_path, host=f"{EVIL}:{server.port}"), 421)
        refusal(call(server, tmp_path, Origin=f"http://{EVIL}"), 403)
        assert not ran(tmp_path)
        assert call(server, tmp_path).status_code == 200 and ran(tmp_path)
