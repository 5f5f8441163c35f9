"""A small OAuth authorization server for tests, on 127.0.0.1 in a thread of the test process: RSA keys made here,
the JWKS at /.well-known/jwks.json, the client-credentials grant at /token, and `mint()` for tokens a test shapes
itself. It counts the requests it serves, so a test can assert how often the tool server or client came back.
With `drip_s` set it is a slow issuer: its JWKS comes one byte per `drip_s` seconds (at most DRIP_BYTES of it).

    with Issuer() as issuer:
        token = issuer.mint(sub="client-a", aud="http://127.0.0.1:8000/mcp", scope="mcp:tools")
"""

import base64
import json
import threading
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs

import anyio
import jwt
import uvicorn
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .polling import wait_until
from .servers import free_port

DRIP_BYTES = 25
"""A dripping JWKS ends (truncated) after this many bytes: a test against old code ends too."""


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class Issuer:
    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.jwks_url = self.url + "/.well-known/jwks.json"
        self.token_url = self.url + "/token"
        self.key, self.kid = new_key(), "key-1"
        self.published: dict[str, rsa.RSAPrivateKey] = {self.kid: self.key}
        self.clients: dict[str, str] = {}
        """client_id -> secret, for the client-credentials grant (the token's sub is the client_id)"""
        self.lifetimes: list[int] = []
        """expires_in of the next tokens /token mints, one per request (then 300); a negative one mints a token
        already expired while still saying expires_in 300, as if the client's clock were wrong"""
        self.jwks_requests = 0
        self.drip_s: float | None = None
        """Seconds between the bytes of the JWKS answer (headers at once); None: the whole answer at once."""
        self.token_requests: list[dict[str, str]] = []
        """the form of every /token request (the secret is in the Basic header, not here)"""
        app = Starlette(
            routes=[Route("/.well-known/jwks.json", self._jwks), Route("/token", self._token, methods=["POST"])]
        )
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="test-issuer", daemon=True)

    def __enter__(self) -> "Issuer":
        self._thread.start()
        wait_until(lambda: self._server.started, "the test issuer to listen", timeout_s=10)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def mint(
        self,
        *,
        sub: str,
        aud: str,
        scope: str = "",
        expires_in: int = 300,
        key: rsa.RSAPrivateKey | None = None,
        kid: str | None = None,
        iss: str | None = None,
    ) -> str:
        now = int(time.time())
        claims = {"iss": iss or self.url, "sub": sub, "aud": aud, "iat": now, "exp": now + expires_in, "scope": scope}
        claims["client_id"] = sub
        return jwt.encode(claims, key or self.key, algorithm="RS256", headers={"kid": kid or self.kid})

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kid, key in self.published.items():
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
            keys.append({**jwk, "kid": kid, "alg": "RS256", "use": "sig"})
        return {"keys": keys}

    async def _jwks(self, request: Request) -> Response:
        self.jwks_requests += 1
        if self.drip_s is None:
            return JSONResponse(self.jwks())
        return StreamingResponse(_drip(json.dumps(self.jwks()).encode(), self.drip_s), media_type="application/json")

    async def _token(self, request: Request) -> Response:
        form = {k: v[0] for k, v in parse_qs((await request.body()).decode()).items()}
        self.token_requests.append(form)
        scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
        client_id, _, secret = (
            base64.b64decode(credentials).decode().partition(":") if scheme == "Basic" else ("", "", "")
        )
        if form.get("grant_type") != "client_credentials":
            return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)
        if client_id not in self.clients or self.clients[client_id] != secret:
            return JSONResponse({"error": "invalid_client", "error_description": "unknown client"}, status_code=401)
        lifetime = self.lifetimes.pop(0) if self.lifetimes else 300
        token = self.mint(sub=client_id, aud=form.get("resource", ""), scope=form.get("scope", ""), expires_in=lifetime)
        return JSONResponse(
            {"access_token": token, "token_type": "Bearer", "expires_in": lifetime if lifetime >= 0 else 300}
        )


async def _drip(body: bytes, interval_s: float) -> AsyncIterator[bytes]:
    """The slow issuer's answer: a byte, a pause, ... (the pause is the behaviour under test, not a wait for it)."""
    for byte in body[:DRIP_BYTES]:
        yield bytes([byte])
        await anyio.sleep(interval_s)


def hostile_cases(scope: str, stranger: str, stranger_said: str) -> list[tuple[str, int, str]]:
    """(case, status, what the refusal says) for a resource server of this issuer whose tokens need `scope`: no
    token, expired, another resource's, another issuer's, without the scope, of a subject it does not know
    (`stranger`: its case name, e.g. "no_such_agent", and what the refusal says of it)."""
    return [
        ("no_token", 401, "no bearer token was sent"),
        ("expired", 401, "the access token has expired (exp)"),
        ("wrong_audience", 401, "the access token was issued for another resource"),
        ("wrong_issuer", 401, "the access token was not issued by"),
        ("missing_scope", 403, f"lacks the scope(s) {scope}"),
        (stranger, 403, stranger_said),
    ]


def hostile_token(case: str, mint: Any, other_audience: str, stranger_sub: str) -> str | None:
    """The token of one of `hostile_cases` (None: no token), made with the test's `mint(**claim_changes)`."""
    if case == "no_token":
        return None
    changes: dict[str, Any] = {
        "expired": {"expires_in": -120},
        "wrong_audience": {"aud": other_audience},
        "wrong_issuer": {"iss": "http://127.0.0.1:1/another-issuer"},
        "missing_scope": {"scope": "openid"},
    }.get(case, {"sub": stranger_sub})
    return str(mint(**changes))
