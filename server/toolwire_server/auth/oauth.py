"""MCP authorization on /mcp: this server as an OAuth 2.1 resource server. A JWT access token from the configured
issuer is checked (signature against the issuer's JWKS, `iss`, `aud` == this server's resource URL, `exp`/`nbf`,
an allow-list of public-key algorithms, the required scopes) and its `agent_claim` maps to an agent's Grant, the
same Grant a static token gives; the protected-resource metadata (RFC 9728) names the issuer.

Why our Gate and not the SDK's `token_verifier=`/`AuthSettings`: the SDK's bearer check runs inside its app, behind
the Gate and the SessionGuard, which need the caller's Grant first (the session caps would count callers nobody has
authenticated yet); its refusals are `{"error", "error_description"}` bodies, not the readable ones the Gate sends;
and static tokens would have to pass through it as well. So the Gate stays the one auth stack: it asks
`OAuthVerifier` about a token no static entry knows, answers 401/403 with RFC 6750/9728 `WWW-Authenticate`
headers, and serves the metadata route itself.

Keys come from the JWKS over httpx2 (async: the event loop never waits on a socket) into `jwt.PyJWKSet`;
`jwt.PyJWKClient` fetches with blocking urllib, which would stall every request while the issuer answers."""

import logging
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio
import httpx2
import jwt
from anyio.abc import TaskGroup
from starlette.applications import Starlette

from toolwire_server import texts
from toolwire_server.auth.access import Grant, OAuthSettings
from toolwire_shared import errors
from toolwire_shared.tls import ssl_context

log = logging.getLogger("toolwire.server.oauth")

METADATA_PATH = "/.well-known/oauth-protected-resource"
JWKS_DEADLINE_S = 5.0
"""The default for `[oauth] jwks_timeout_s`: how long one JWKS fetch may take, all of it."""


def metadata_url(resource: str) -> str:
    """Where RFC 9728 §3.1 puts the metadata of `resource`: the well-known path before the resource's path."""
    parts = urlsplit(resource)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, METADATA_PATH + path, "", ""))


def metadata(settings: OAuthSettings, name: str) -> dict[str, Any]:
    """The protected-resource metadata document (RFC 9728 §2)."""
    return {
        "resource": settings.resource,
        "authorization_servers": [settings.issuer],
        "scopes_supported": list(settings.required_scopes),
        "bearer_methods_supported": ["header"],
        "resource_signing_alg_values_supported": list(settings.algorithms),
        "resource_name": name,
    }


@dataclass(frozen=True)
class Refusal:
    """Why a token is not accepted: `status` 401 (invalid_token), 403 (insufficient_scope or no such agent) or 503
    (the issuer's keys cannot be fetched). `description` is short, for the header; `message` is the body a person
    reads."""

    status: int
    error: str
    description: str
    message: str
    scope: str | None = None


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


class OAuthVerifier:
    """A JWT access token -> the Grant of the agent it names, or the Refusal to answer."""

    def __init__(self, settings: OAuthSettings, subjects: dict[str, Grant], keys: SigningKeys | None = None) -> None:
        self.settings, self.subjects = settings, subjects
        self.keys = keys or SigningKeys(
            settings.jwks_url,
            refetch_s=settings.jwks_refetch_s,
            max_age_s=settings.jwks_max_age_s,
            deadline_s=settings.jwks_timeout_s,
        )
        self.metadata_url = metadata_url(settings.resource)
        resource = settings.resource.rstrip("/")
        self._audiences = [resource, resource + "/"]  # the one resource, spelt with or without its trailing slash

    async def verify(self, token: str) -> Grant | Refusal:
        s = self.settings
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return self._invalid(texts.TOKEN_MALFORMED)
        alg, kid = header.get("alg"), header.get("kid")
        if alg not in s.algorithms:  # `none` and HS* never get as far as a key
            return self._invalid(texts.token_algorithm(str(alg)[:20], s.algorithms))
        if kid is not None and not isinstance(kid, str):
            return self._invalid(texts.TOKEN_MALFORMED)
        try:
            key = await self.keys.get(kid)
        except KeysUnavailable:
            return Refusal(503, "temporarily_unavailable", "", texts.keys_unavailable(s.issuer))
        if key is None:
            return self._invalid(texts.token_unknown_key(kid))
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=list(s.algorithms),
                audience=self._audiences,
                issuer=s.issuer,
                leeway=s.leeway_s,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError as exc:
            return self._invalid(_problem(exc, s))
        agent = claims.get(s.agent_claim)
        if not isinstance(agent, str) or not agent:
            return self._invalid(texts.token_lacks_claim(s.agent_claim))
        missing = [scope for scope in s.required_scopes if scope not in _scopes(claims)]
        if missing:
            scope = " ".join(s.required_scopes)
            message = texts.insufficient_scope(missing, s.required_scopes)
            return Refusal(403, "insufficient_scope", texts.SCOPE_MISSING, message, scope)
        grant = self.subjects.get(agent)
        if grant is None:
            log.warning(
                "403: a valid token's %s %s is no agent in the access config", s.agent_claim, errors.quoted(agent)
            )
            return Refusal(403, "forbidden", "", texts.unknown_subject(s.agent_claim, agent))
        return grant

    def _invalid(self, problem: str) -> Refusal:
        return Refusal(
            401, "invalid_token", problem, texts.token_refused(problem, self.settings.issuer, self.metadata_url)
        )


def _problem(exc: jwt.PyJWTError, s: OAuthSettings) -> str:
    if isinstance(exc, jwt.ExpiredSignatureError):
        return texts.TOKEN_EXPIRED
    if isinstance(exc, jwt.ImmatureSignatureError):
        return texts.TOKEN_NOT_YET_VALID
    if isinstance(exc, jwt.InvalidAudienceError):
        return texts.token_audience(s.resource)
    if isinstance(exc, jwt.InvalidIssuerError):
        return texts.token_issuer(s.issuer)
    if isinstance(exc, jwt.MissingRequiredClaimError):
        return texts.token_lacks_claim(exc.claim)
    if isinstance(exc, jwt.InvalidSignatureError):
        return texts.TOKEN_BAD_SIGNATURE
    if isinstance(exc, jwt.InvalidAlgorithmError):
        return texts.token_algorithm("(this key's)", s.algorithms)
    return texts.TOKEN_MALFORMED


def _scopes(claims: dict[str, Any]) -> set[str]:
    """RFC 9068 `scope` (space-separated); some issuers send `scp` as a list."""
    found: set[str] = set()
    for name in ("scope", "scp"):
        value = claims.get(name)
        if isinstance(value, str):
            found.update(value.split())
        elif isinstance(value, list):
            found.update(v for v in value if isinstance(v, str))
    return found
