"""MCP authorization over real HTTP: the tool server under uvicorn as an OAuth resource server for a test issuer on
127.0.0.1 (its own RSA keys and JWKS), beside static tokens in the same access config."""

import hashlib
import hmac
import json
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import httpx2
import jwt
import pytest

from helpers.issuer import Issuer, new_key
from helpers.mcp_http import MCP_HEADERS, initialize
from helpers.servers import REPO, TEST_TOOLS, HttpServer, http_client, serve_argv, text_of
from toolwire_server.auth.access import ASYMMETRIC_ALGORITHMS, AccessConfigError, parse_access

ADMIN = "tok-admin-5b1e"
READER_TOOLS = {"echo", "add"}
SCOPE = "mcp:tools"
INITIALIZE = initialize("oauth")


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with Issuer() as running:
        yield running


@pytest.fixture(scope="module")
def server(issuer: Issuer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    tokens = tmp_path_factory.mktemp("access") / "tokens.toml"
    server = HttpServer(TEST_TOOLS, "--tokens", str(tokens))
    tokens.write_text(
        f'[oauth]\nissuer = "{issuer.url}"\nresource = "{server.url}"\nrequired_scopes = ["{SCOPE}"]\n'
        '[agents.reader]\nsubject = "client-reader"\ntools = ["echo", "add"]\n'
        f'[agents.admin]\ntoken = "{ADMIN}"\nsubject = "client-admin"\ntools = ["*"]\n'
    )
    with server as running:
        yield running


def metadata_url(server: HttpServer) -> str:
    return server.base + "/.well-known/oauth-protected-resource/mcp"


def post(server: HttpServer, token: str | None) -> httpx2.Response:
    headers = {**MCP_HEADERS, **({"Authorization": f"Bearer {token}"} if token else {})}
    return httpx2.post(server.url, json=INITIALIZE, headers=headers, timeout=10)  # a legacy initialize: 200 if let in


def test_the_metadata_document_names_issuer_resource_and_scopes(issuer: Issuer, server: HttpServer) -> None:
    expected = {
        "resource": server.url,
        "authorization_servers": [issuer.url],
        "scopes_supported": [SCOPE],
        "bearer_methods_supported": ["header"],
        "resource_signing_alg_values_supported": list(ASYMMETRIC_ALGORITHMS),
        "resource_name": "toolwire-test-tools",
    }
    for url in (metadata_url(server), server.base + "/.well-known/oauth-protected-resource"):
        response = httpx2.get(url, timeout=10)  # no token: the document is never behind auth
        assert response.status_code == 200
        assert response.json() == expected


def test_no_token_gets_401_pointing_at_the_metadata(issuer: Issuer, server: HttpServer) -> None:
    response = post(server, None)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == f'Bearer resource_metadata="{metadata_url(server)}"'
    message = response.json()["message"]
    assert message.startswith("no bearer token was sent. Send the header 'Authorization: Bearer <token>'")
    assert f"an OAuth access token from {issuer.url} for the resource {server.url}" in message


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_valid_token_lists_exactly_its_tools_and_calls_one(
    issuer: Issuer, server: HttpServer, mode: Literal["auto", "legacy"]
) -> None:
    token = issuer.mint(sub="client-reader", aud=server.url, scope=f"openid {SCOPE}")
    async with http_client(server.url, token=token, mode=mode) as reader:
        assert {t.name for t in (await reader.list_tools()).tools} == READER_TOOLS
        assert text_of(await reader.call_tool("echo", {"text": "via oauth"})) == "via oauth"
        refused = await reader.call_tool("admin_only", {})
        assert refused.is_error and text_of(refused) == "ERROR: tool 'admin_only' is not permitted for agent 'reader'."


def _unsigned(claims: dict[str, object], kid: str) -> str:
    def part(value: dict[str, object]) -> str:
        return jwt.utils.base64url_encode(json.dumps(value).encode()).decode()

    return f"{part({'alg': 'none', 'typ': 'JWT', 'kid': kid})}.{part(claims)}."


def _hs256_with_public_key(issuer: Issuer, claims: dict[str, object]) -> str:
    """The classic confusion: an HMAC 'signed' with the issuer's public key as the shared secret."""
    header = {"alg": "HS256", "typ": "JWT", "kid": issuer.kid}
    public = json.dumps(issuer.jwks()["keys"][0]).encode()
    signing_input = ".".join(jwt.utils.base64url_encode(json.dumps(v).encode()).decode() for v in (header, claims))
    signature = hmac.new(public, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{jwt.utils.base64url_encode(signature).decode()}"


@pytest.mark.parametrize(
    "case",
    ["wrong_audience", "expired", "bad_signature", "alg_none", "hs256_public_key", "wrong_issuer", "not_a_jwt"],
)
def test_a_refused_token_gets_401_invalid_token_saying_why(issuer: Issuer, server: HttpServer, case: str) -> None:
    claims: dict[str, object] = {"iss": issuer.url, "sub": "client-admin", "aud": server.url, "scope": SCOPE}
    claims["exp"] = 2**31
    tokens = {
        "wrong_audience": (
            issuer.mint(sub="client-admin", aud="http://127.0.0.1:1/other-mcp", scope=SCOPE),
            f"the access token was issued for another resource: its aud must name {server.url}",
        ),
        "expired": (
            issuer.mint(sub="client-admin", aud=server.url, scope=SCOPE, expires_in=-120),
            "the access token has expired (exp)",
        ),
        "bad_signature": (
            issuer.mint(sub="client-admin", aud=server.url, scope=SCOPE, key=new_key()),  # the published kid
            "the access token's signature does not verify against the issuer's keys",
        ),
        "alg_none": (_unsigned(claims, issuer.kid), "the access token's algorithm 'none' is not accepted"),
        "hs256_public_key": (
            _hs256_with_public_key(issuer, claims),
            "the access token's algorithm 'HS256' is not accepted",
        ),
        "wrong_issuer": (
            issuer.mint(sub="client-admin", aud=server.url, scope=SCOPE, iss="http://127.0.0.1:1"),
            f"the access token was not issued by {issuer.url} (iss)",
        ),
        "not_a_jwt": ("tok-nobody-knows", "the bearer token is neither a token from the access config nor"),
    }
    token, problem = tokens[case]
    response = post(server, token)
    assert response.status_code == 401, response.text
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith(f'Bearer resource_metadata="{metadata_url(server)}", error="invalid_token", ')
    assert f'error_description="{problem}' in challenge
    body = response.json()
    assert body["error"] == "unauthorized"
    assert body["message"].startswith(problem)
    assert f"a current access token from {issuer.url}" in body["message"]
    assert token not in server.stderr()  # refusals are logged without the token


def test_an_unknown_key_id_refetches_the_jwks_once_then_is_refused(issuer: Issuer, server: HttpServer) -> None:
    assert post(server, issuer.mint(sub="client-admin", aud=server.url, scope=SCOPE)).status_code == 200
    before = issuer.jwks_requests
    assert before >= 1
    stranger = new_key()
    first = post(server, issuer.mint(sub="client-admin", aud=server.url, scope=SCOPE, key=stranger, kid="rotated-1"))
    assert first.status_code == 401
    assert "the access token's signing key 'rotated-1' is not among the issuer's published keys" in first.text
    assert issuer.jwks_requests == before + 1  # looked again, in case the issuer had rotated its keys
    again = post(server, issuer.mint(sub="client-admin", aud=server.url, scope=SCOPE, key=stranger, kid="rotated-2"))
    assert again.status_code == 401
    assert issuer.jwks_requests == before + 1  # not again within jwks_refetch_s: forged kids cannot hammer the issuer


def test_a_token_without_the_required_scope_gets_403(issuer: Issuer, server: HttpServer) -> None:
    response = post(server, issuer.mint(sub="client-admin", aud=server.url, scope="openid profile"))
    assert response.status_code == 403
    assert response.headers["www-authenticate"] == (
        f'Bearer resource_metadata="{metadata_url(server)}", error="insufficient_scope", '
        f'error_description="the access token lacks a required scope", scope="{SCOPE}"'
    )
    assert response.json() == {
        "error": "insufficient_scope",
        "message": f'the access token is valid but lacks the scope(s) {SCOPE}. Request a token with scope "{SCOPE}" '
        "and send it again.",
    }


def test_a_valid_token_for_no_agent_gets_403(issuer: Issuer, server: HttpServer) -> None:
    response = post(server, issuer.mint(sub="client-stranger", aud=server.url, scope=SCOPE))
    assert response.status_code == 403
    assert response.json()["message"].startswith("the access token is valid, but its sub 'client-stranger' is no agent")


async def test_static_tokens_still_work_beside_oauth(issuer: Issuer, server: HttpServer) -> None:
    async with http_client(server.url, token=ADMIN, mode="legacy") as admin:
        names = {t.name for t in (await admin.list_tools()).tools}
        assert "admin_only" in names and names > READER_TOOLS
        assert text_of(await admin.call_tool("admin_only", {})) == "admin"
    token = issuer.mint(sub="client-admin", aud=server.url, scope=SCOPE)  # the same agent through OAuth
    async with http_client(server.url, token=token) as admin:
        assert {t.name for t in (await admin.list_tools()).tools} == names


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tokens.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ('[oauth]\nissuer = "https://a.example"\n', "oauth needs 'resource', an https URL"),
        ('[oauth]\nissuer = "http://a.example"\nresource = "https://t.example/mcp"\n', "expected an https URL"),
        (
            '[oauth]\nissuer = "https://a.example"\nresource = "https://t.example/mcp"\nalgorithms = ["HS256"]\n',
            "oauth.algorithms: HS256 not accepted",
        ),
        ('[oauth]\nissuer = "https://a.example"\nresource = "https://t.example/mcp"\naudience = "x"\n', "unknown key"),
    ],
)
def test_an_oauth_config_mistake_is_one_readable_error(config: str, expected: str) -> None:
    with pytest.raises(AccessConfigError, match=expected):
        parse_access(_tables(config + '[agents.a]\nsubject = "a"\ntools = ["*"]\n'), "tokens.toml")


def test_a_subject_without_an_oauth_table_is_refused() -> None:
    with pytest.raises(AccessConfigError, match="there is no \\[oauth\\] table"):
        parse_access(_tables('[agents.a]\nsubject = "a"\ntools = ["*"]\n'), "tokens.toml")


def test_serve_refuses_a_bad_oauth_table_with_one_line(tmp_path: Path) -> None:
    tokens = _write(tmp_path, '[oauth]\nissuer = "ftp://a"\n[agents.a]\nsubject = "a"\ntools = ["*"]\n')
    argv = serve_argv(TEST_TOOLS, "--http", "--port", "0", "--tokens", str(tokens))
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert f"Error: {tokens}: oauth.issuer = 'ftp://a': expected an https URL" in proc.stderr


def _tables(text: str) -> dict[str, object]:
    return tomllib.loads(text)
