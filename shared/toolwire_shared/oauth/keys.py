"""The issuer's signing keys (its JWKS), fetched and cached for the verifier (verifier.py).

Keys come from the JWKS over httpx2 (async: the event loop never waits on a socket) into `jwt.PyJWKSet`;
`jwt.PyJWKClient` fetches with blocking urllib, which would stall every request while the issuer answers."""

import logging
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import jwt
from anyio.abc import TaskGroup
from starlette.applications import Starlette

from toolwire_shared import errors
from toolwire_shared.tls import ssl_context

log = logging.getLogger("toolwire.oauth")

JWKS_DEADLINE_S = 5.0
"""The default for `[oauth] jwks_timeout_s`: how long one JWKS fetch may take, all of it."""


class KeysUnavailable(Exception):
    """No signing keys: the JWKS could not be fetched (the reason is in the log)."""


class SigningKeys:
    """The issuer's JWKS, cached. A token whose key is cached is checked at once, even while a fetch runs. A fetch
    has one deadline for the whole of it (`deadline_s`; a per-read timeout restarts on every byte, so a host that
    drips its answer could hold it for ever), and only a caller with no cached key for its token waits for one,
    never longer than the deadline; callers that need a fetch share the one running.

    Fetched when a token first needs it; when older than `max_age_s`, fetched again in the background while
    `refreshing()` runs (the app's lifespan; without it, by the caller that finds them stale, within the deadline).
    An unknown `kid` refetches at most once per `refetch_s` (so forged kids cannot make us hammer the issuer), and so
    does a retry after a failed fetch; a failure keeps the old keys. Symmetric (`oct`) keys are dropped: only public
    keys verify."""

    def __init__(
        self,
        url: str,
        *,
        refetch_s: float,
        max_age_s: float,
        deadline_s: float = JWKS_DEADLINE_S,
        clock: Callable[[], float] = time.monotonic,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        self.url, self.refetch_s, self.max_age_s, self.deadline_s = url, refetch_s, max_age_s, deadline_s
        self._clock, self._transport = clock, transport
        self._keys: list[jwt.PyJWK] = []
        self._fetched_at: float | None = None
        self._last_try = -math.inf
        self._last_refetch = -math.inf
        self._running: anyio.Event | None = None
        """Set when the fetch in flight ends; None when none is."""
        self._background: TaskGroup | None = None

    @asynccontextmanager
    async def refreshing(self) -> AsyncIterator[None]:
        """While this runs, fetches run in its task group: a stale set is refreshed without any caller waiting, and
        a caller that gives up (or goes away) does not end the fetch the others wait for."""
        async with anyio.create_task_group() as tg:
            self._background = tg
            try:
                yield
            finally:
                self._background = None
                tg.cancel_scope.cancel()

    async def get(self, kid: str | None) -> jwt.PyJWK | None:
        now = self._clock()
        fetched = False
        stale = self._fetched_at is None or now - self._fetched_at >= self.max_age_s
        failed_recently = self._last_try > (self._fetched_at or -math.inf) and now - self._last_try < self.refetch_s
        if stale and not failed_recently:  # with keys to serve meanwhile and a background, nobody waits for it
            fetched = not (self._keys and self._background is not None)
            await self._fetch_shared(now, wait=fetched)
        elif not self._keys and self._running is not None:  # the first fetch runs: nothing cached to serve meanwhile
            await self._fetch_shared(now)
        if not self._keys:
            raise KeysUnavailable(self.url)
        key = self._find(kid)
        if key is None and kid is not None and not fetched:
            if self._running is not None:  # the fetch in flight may bring it: no new one
                await self._fetch_shared(now)
            elif now - self._last_refetch >= self.refetch_s:
                self._last_refetch = now
                log.info("unknown key id %s: fetching %s again", errors.quoted(kid, 80), self.url)
                await self._fetch_shared(now)
            key = self._find(kid)
        return key

    def _find(self, kid: str | None) -> jwt.PyJWK | None:
        if kid is None:  # no kid in the token: only unambiguous with a single key
            return self._keys[0] if len(self._keys) == 1 else None
        return next((k for k in self._keys if k.key_id == kid), None)

    async def _fetch_shared(self, now: float, *, wait: bool = True) -> None:
        """Start a fetch unless one runs (in the background if there is one, else in this task); with `wait`, wait
        for it, at most the deadline."""
        done = self._running
        if done is None:
            done = self._running = anyio.Event()
            self._last_try = now
            if self._background is None:
                await self._fetch(now, done)
                return
            self._background.start_soon(self._fetch, now, done)
        if wait:
            with anyio.move_on_after(self.deadline_s):
                await done.wait()

    async def _fetch(self, now: float, done: anyio.Event) -> None:
        try:
            with anyio.fail_after(self.deadline_s):  # the whole fetch: connect, headers and every byte of the body
                async with httpx2.AsyncClient(
                    timeout=self.deadline_s, transport=self._transport, verify=ssl_context()
                ) as http:
                    response = await http.get(self.url, headers={"Accept": "application/json"})
            response.raise_for_status()
            keys = [k for k in jwt.PyJWKSet.from_dict(response.json()) if k.key_type != "oct"]
            if not keys:
                raise ValueError("no public keys in the set")
        except TimeoutError:
            log.warning(
                "JWKS %s was not fetched within %g s: the keys cached before (if any) stay", self.url, self.deadline_s
            )
            return
        except (httpx2.HTTPError, ValueError, jwt.PyJWTError) as exc:
            log.warning("JWKS %s could not be fetched: %s: %s", self.url, type(exc).__name__, exc)
            return
        else:
            self._keys, self._fetched_at = keys, now
        finally:
            self._running = None
            done.set()


def refresh_in_lifespan(app: Starlette, keys: SigningKeys) -> None:
    """Run `keys.refreshing()` for as long as `app` runs (its lifespan), so stale keys refresh in the background."""
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(running: Any) -> AsyncIterator[Any]:
        async with keys.refreshing(), inner(running) as state:
            yield state

    app.router.lifespan_context = lifespan
