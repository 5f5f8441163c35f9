"""The client side of MCP authorization: an HTTP McpSource gets its access token by the client-credentials grant
from a test issuer on 127.0.0.1 and connects to the real tool server under uvicorn, which validates it; the token
is renewed before it expires and once when the server answers 401."""

import logging
from collections.abc import Iterator

import pytest

from helpers.issuer import Issuer
from helpers.servers import TEST_TOOLS, HttpServer
from toolwire_client.assembly.sources import build_sources
from toolwire_client.config import OAuthClientSpec, ServerSpec
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.oauth_auth import ClientCredentials
from toolwire_client.tools.source import RunContext, ToolRequest, ToolServerFailed
from toolwire_shared.messages import ToolCall

CLIENT, SECRET = "client-cc", "s3cret-cc-9d1f"
SCOPE = "mcp:tools"


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with Issuer() as running:
        running.clients[CLIENT] = SECRET
        yield running


@pytest.fixture(scope="module")
def server(issuer: Issuer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    tokens = tmp_path_factory.mktemp("access") / "tokens.toml"
    server = HttpServer(TEST_TOOLS, "--tokens", str(tokens), "--log-level", "INFO")
    tokens.write_text(
        f'[oauth]\nissuer = "{issuer.url}"\nresource = "{server.url}"\nrequired_scopes = ["{SCOPE}"]\n'
        f'[agents.cc]\nsubject = "{CLIENT}"\ntools = ["echo", "add"]\n'
    )
    with server as running:
        yield running


@pytest.fixture(autouse=True)
def fresh_issuer(issuer: Issuer) -> None:
    issuer.token_requests.clear()
    issuer.lifetimes.clear()


def source(issuer: Issuer, server: HttpServer, *, secret: str = SECRET, margin_s: float = 30) -> McpSource:
    auth = ClientCredentials(
        issuer.token_url, CLIENT, secret, scope=SCOPE, resource=server.url, refresh_margin_s=margin_s
    )
    return McpSource("oauth", url=server.url, auth=auth)


async def test_a_server_spec_with_client_credentials_connects(
    issuer: Issuer, server: HttpServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_OAUTH_SECRET", SECRET)
    spec = ServerSpec(
        url=server.url,
        oauth=OAuthClientSpec(
            token_url=issuer.token_url, client_id=CLIENT, client_secret_env="TEST_OAUTH_SECRET", scope=SCOPE
        ),
    )
    [mcp] = build_sources([spec])
    await mcp.start()
    try:
        assert {t.name for t in await mcp.list_tools()} == {"echo", "add"}
        echo = ToolCall(id="c1", name="echo", arguments={"text": "cc"})
        result = await mcp.call(ToolRequest(echo, RunContext("r"), timeout_s=10))
        assert result.content == "cc"
    finally:
        await mcp.aclose()
    # one token for the whole session, bound to this server by RFC 8707's resource
    assert issuer.token_requests == [{"grant_type": "client_credentials", "scope": SCOPE, "resource": server.url}]


async def test_a_refused_token_is_renewed_once_on_the_401(issuer: Issuer, server: HttpServer) -> None:
    issuer.lifetimes.append(-120)  # the first token is already expired, though the issuer says expires_in 300
    mcp = source(issuer, server)
    await mcp.start()
    try:
        assert {t.name for t in await mcp.list_tools()} == {"echo", "add"}
    finally:
        await mcp.aclose()
    assert len(issuer.token_requests) == 2
    assert "401 for POST /mcp: the access token has expired (exp)" in server.stderr()


async def test_a_token_near_its_expiry_is_renewed_before_it_is_sent(
    issuer: Issuer, server: HttpServer, caplog: pytest.LogCaptureFixture
) -> None:
    issuer.lifetimes.append(5)  # within the 30 s refresh margin: used for the request it was fetched for, no more
    mcp = source(issuer, server)
    with caplog.at_level(logging.INFO, logger="toolwire.client.oauth"):
        await mcp.start()
        try:
            for _ in range(3):
                assert {t.name for t in await mcp.list_tools()} == {"echo", "add"}
        finally:
            await mcp.aclose()
    assert len(issuer.token_requests) == 2  # the second token lives 300 s: no third request
    assert not [r for r in caplog.records if "HTTP 401" in r.getMessage()]  # renewed before, not after a refusal


async def test_a_wrong_client_secret_fails_the_start_readably_without_the_secret(
    issuer: Issuer, server: HttpServer
) -> None:
    wrong = "not-the-secret-4e2a"
    mcp = source(issuer, server, secret=wrong)
    with pytest.raises(ToolServerFailed) as failed:
        await mcp.start()
    assert failed.value.kind == "refused"
    message = str(failed.value)
    assert message == (
        f"tool server 'oauth' ({server.url}) got no access token: the token endpoint {issuer.token_url} refused "
        f"client '{CLIENT}': HTTP 401 invalid_client unknown client"
    )
    assert wrong not in message and wrong not in repr(mcp.auth)
