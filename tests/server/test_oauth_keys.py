"""The JWKS cache of the OAuth verifier, on a clock the test moves: key rotation is picked up, forged key ids cannot
make it fetch more than once per jwks_refetch_s, and an issuer that fails keeps the keys it published before."""

import json

import httpx2
import jwt
import pytest

from helpers.issuer import new_key
from toolwire_server.auth.oauth import KeysUnavailable, SigningKeys

URL = "https://issuer.example/.well-known/jwks.json"


class FakeIssuer:
    def __init__(self) -> None:
        self.keys = {"k1": new_key()}
        self.requests = 0
        self.down = False

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests += 1
        if self.down:
            return httpx2.Response(503)
        published = [
            {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(k.public_key())), "kid": kid, "alg": "RS256"}
            for kid, k in self.keys.items()
        ]
        published.append({"kty": "oct", "k": "c2VjcmV0", "kid": "shared"})  # a symmetric key: never used
        return httpx2.Response(200, json={"keys": published})


class Clock:
    now = 1000.0

    def __call__(self) -> float:
        return self.now


def cache(issuer: FakeIssuer, clock: Clock) -> SigningKeys:
    transport = httpx2.MockTransport(issuer.handle)
    return SigningKeys(URL, refetch_s=60, max_age_s=3600, clock=clock, transport=transport)


async def test_a_rotated_key_is_fetched_once_and_forged_kids_are_rate_limited() -> None:
    issuer, clock = FakeIssuer(), Clock()
    keys = cache(issuer, clock)
    assert (await keys.get("k1")) is not None and issuer.requests == 1
    assert (await keys.get("k1")) is not None and issuer.requests == 1  # cached
    assert await keys.get("shared") is None  # the oct key was dropped: no HMAC with a published secret
    assert issuer.requests == 2  # ("shared" was unknown, so that was the one refetch)
    issuer.keys["k2"] = new_key()
    clock.now += 30
    assert await keys.get("k2") is None and issuer.requests == 2  # within 60 s of the last refetch
    clock.now += 31
    assert (await keys.get("k2")) is not None and issuer.requests == 3  # rotation picked up
    assert await keys.get("x0") is None and issuer.requests == 3  # just refetched: not again
    clock.now += 61
    for forged in ("x1", "x2", "x3"):
        assert await keys.get(forged) is None
    assert issuer.requests == 4  # one refetch for three forged kids


async def test_an_issuer_that_fails_keeps_the_old_keys_and_is_not_retried_at_once() -> None:
    issuer, clock = FakeIssuer(), Clock()
    keys = cache(issuer, clock)
    issuer.down = True
    with pytest.raises(KeysUnavailable):
        await keys.get("k1")
    assert issuer.requests == 1
    with pytest.raises(KeysUnavailable):
        await keys.get("k1")  # no retry within refetch_s
    assert issuer.requests == 1
    issuer.down = False
    clock.now += 61
    assert (await keys.get("k1")) is not None and issuer.requests == 2
    issuer.down = True
    clock.now += 3600  # stale: refreshed, fails, the old keys still verify
    assert (await keys.get("k1")) is not None and issuer.requests == 3
