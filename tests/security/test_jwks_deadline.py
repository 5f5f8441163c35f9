"""Hole 7: a slow JWKS host does not stall OAuth callers. A real `toolwire serve --http` checks tokens against a test
issuer on 127.0.0.1 whose JWKS can drip one byte a second (DRIP_BYTES of it, so about 25 s in all: a per-read
timeout never fires). A caller whose key is cached is answered while a fetch drips; a caller that needs the fetch
gets its refusal within the fetch's one deadline (plus a margin for a busy machine), never after the whole drip.

The bounds are correctness checks, not performance ones: "answered before the deadline" and "answered within the
deadline + MARGIN_S" are far below the drip's 25 s that the old code waited."""

import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest

from helpers.issuer import DRIP_BYTES, Issuer, new_key
from helpers.mcp_http import MCP_HEADERS, initialize
from helpers.polling import await_until
from helpers.servers import TEST_TOOLS, HttpServer

JWKS_DEADLINE_S = 5.0
"""The default `[oauth] jwks_timeout_s` (set here, not imported: the test runs against code without it too)."""
MARGIN_S = 5.0
DRIP_S = 1.0
INITIALIZE = initialize("jwks")
assert DRIP_BYTES * DRIP_S > 2 * (JWKS_DEADLINE_S + MARGIN_S)  # the drip outlasts every bound below


def _serve(issuer: Issuer, tmp_path: Path, extra: str = "") -> HttpServer:
    tokens = tmp_path / "tokens.toml"
    server = HttpServer(TEST_TOOLS, "--tokens", str(tokens))
    tokens.write_text(
        f'[oauth]\nissuer = "{issuer.url}"\nresource = "{server.url}"\n{extra}'
        '[agents.reader]\nsubject = "client-reader"\ntools = ["echo"]\n'
    )
    return server


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with Issuer() as running:
        yield running


async def _timed_post(http: httpx2.AsyncClient, server: HttpServer, token: str) -> tuple[httpx2.Response, float]:
    started = time.monotonic()
    response = await http.post(server.url, json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": f"Bearer {token}"})
    return response, time.monotonic() - started


async def test_a_cached_key_is_answered_while_an_unknown_kid_waits_at_most_the_deadline(
    issuer: Issuer, tmp_path: Path
) -> None:
    with _serve(issuer, tmp_path) as server:
        cached = issuer.mint(sub="client-reader", aud=server.url)
        stranger = issuer.mint(sub="client-reader", aud=server.url, key=new_key(), kid="rotated-1")
        async with httpx2.AsyncClient(timeout=60) as http:
            assert (await _timed_post(http, server, cached))[0].status_code == 200  # the keys, fetched at once
            issuer.drip_s = DRIP_S
            outcome: dict[str, tuple[httpx2.Response, float]] = {}

            async def needs_the_fetch() -> None:
                outcome["stranger"] = await _timed_post(http, server, stranger)

            async with anyio.create_task_group() as tg:
                tg.start_soon(needs_the_fetch)
                await await_until(lambda: issuer.jwks_requests == 2, "the refetch for the unknown kid", timeout_s=15)
                response, took = await _timed_post(http, server, cached)
                assert response.status_code == 200, response.text
                assert took < JWKS_DEADLINE_S, f"a cached key waited {took:.1f} s for the dripping fetch"
        response, took = outcome["stranger"]
        assert response.status_code == 401
        assert "the access token's signing key 'rotated-1' is not among the issuer's published keys" in response.text
        assert took < JWKS_DEADLINE_S + MARGIN_S, f"the unknown kid waited {took:.1f} s"


async def test_stale_keys_keep_serving_while_the_refresh_drips_and_a_first_fetch_is_cut_at_the_deadline(
    issuer: Issuer, tmp_path: Path
) -> None:
    extra = "jwks_max_age_s = 0\njwks_refetch_s = 0\n"  # always stale, retried at once: every request may refresh
    with _serve(issuer, tmp_path, extra) as server:
        token = issuer.mint(sub="client-reader", aud=server.url)
        async with httpx2.AsyncClient(timeout=60) as http:
            issuer.drip_s = DRIP_S  # nothing cached yet: this caller must wait, but only until the deadline
            response, took = await _timed_post(http, server, token)
            assert response.status_code == 503, response.text
            assert response.json()["message"] == (
                f"the signing keys of {issuer.url} cannot be fetched right now, so no access token can be checked; "
                "try again later."
            )
            assert took < JWKS_DEADLINE_S + MARGIN_S, f"the first fetch held its caller {took:.1f} s"

            issuer.drip_s = None
            assert (await _timed_post(http, server, token))[0].status_code == 200
            before = issuer.jwks_requests
            issuer.drip_s = DRIP_S
            for _ in range(3):  # each finds the keys stale; the refresh runs in the background, one at a time
                response, took = await _timed_post(http, server, token)
                assert response.status_code == 200, response.text
                assert took < JWKS_DEADLINE_S, f"a stale but cached key waited {took:.1f} s for the refresh"
            await await_until(lambda: issuer.jwks_requests > before, "the background refresh to ask the issuer")
            assert issuer.jwks_requests == before + 1  # one refresh in flight, not one per request
