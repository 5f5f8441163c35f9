"""A bearer token for an HTTP tool server from the OAuth client-credentials grant (RFC 6749 §4.4), as an
`httpx2.Auth` the MCP SDK's `streamable_http_client(url, http_client=...)` uses on every request it sends.

The token is fetched when first needed, again shortly before it expires (`refresh_margin_s`), and once more when the
server answers 401 to it (revoked, or a clock that disagrees). The request names the MCP server it is for with
RFC 8707's `resource` (and `audience`, for issuers that want that instead), so the issuer can mint a token bound
to that one server. The client secret goes only into the token request's Basic credentials: never into a log,
an error or a repr."""

import logging
import math
import time
from collections.abc import AsyncGenerator, Callable, Generator

import anyio
import httpx2

from toolwire_shared import errors
from toolwire_shared.tls import ssl_context

log = logging.getLogger("toolwire.client.oauth")

TOKEN_TIMEOUT_S = 15.0


class TokenRequestFailed(Exception):
    """No access token: the token endpoint refused or could not be reached. The message is safe to show."""


class ClientCredentials(httpx2.Auth):
    def __init__(
        self,
        token_url: str,
        client_id: str,
        client_secret: str | None,
        *,
        scope: str | None = None,
        resource: str | None = None,
        audience: str | None = None,
        secret_name: str = "the client secret",
        refresh_margin_s: float = 30.0,
        clock: Callable[[], float] = time.time,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        self.token_url, self.client_id = token_url, client_id
        self._secret, self._secret_name = client_secret, secret_name
        self.scope, self.resource, self.audience = scope, resource, audience
        self.refresh_margin_s, self._clock, self._transport = refresh_margin_s, clock, transport
        self._token: str | None = None
        self._expires_at = -math.inf
        self._lock = anyio.Lock()

    def __repr__(self) -> str:
        return f"ClientCredentials(token_url={self.token_url!r}, client_id={self.client_id!r})"

    def sync_auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        raise RuntimeError("ClientCredentials fetches tokens asynchronously; use it with httpx2.AsyncClient")

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        token = await self._current()
        request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        if response.status_code == 401:  # once: a second 401 is the server's real answer
            log.info("HTTP 401 from %s: fetching a new access token", request.url.host)
            request.headers["Authorization"] = f"Bearer {await self._current(refused=token)}"
            yield request

    async def _current(self, refused: str | None = None) -> str:
        """A token to send: the cached one unless it is missing, about to expire, or the one just refused (then a
        fresh one, unless a concurrent request has fetched it meanwhile)."""
        async with self._lock:
            expiring = self._clock() >= self._expires_at - self.refresh_margin_s
            if self._token is None or expiring or self._token == refused:
                await self._fetch()
            assert self._token is not None
            return self._token

    async def _fetch(self) -> None:
        if not self._secret:
            raise TokenRequestFailed(f"{self._secret_name} is unset or empty, so no access token can be requested")
        form = {"grant_type": "client_credentials"}
        for key, value in (("scope", self.scope), ("resource", self.resource), ("audience", self.audience)):
            if value:
                form[key] = value
        asked = self._clock()
        try:
            async with httpx2.AsyncClient(
                timeout=TOKEN_TIMEOUT_S, transport=self._transport, verify=ssl_context()
            ) as http:
                response = await http.post(self.token_url, data=form, auth=(self.client_id, self._secret))
        except httpx2.HTTPError as exc:
            raise TokenRequestFailed(
                f"the token endpoint {self.token_url} cannot be reached ({type(exc).__name__})"
            ) from None
        body = _json(response)
        if response.status_code != 200:
            said = " ".join(str(body.get(k, "")) for k in ("error", "error_description")).strip()
            status = f"HTTP {response.status_code}" + (f" {errors.clip(said, 200)}" if said else "")
            raise TokenRequestFailed(f"the token endpoint {self.token_url} refused client '{self.client_id}': {status}")
        token, kind, lifetime = body.get("access_token"), body.get("token_type", ""), body.get("expires_in")
        if not isinstance(token, str) or not token or not isinstance(kind, str) or kind.lower() != "bearer":
            raise TokenRequestFailed(f"the token endpoint {self.token_url} answered without a bearer access_token")
        self._token = token
        if isinstance(lifetime, int | float) and not isinstance(lifetime, bool):
            self._expires_at = asked + float(lifetime)
        else:  # no expires_in: renewed on a 401 only
            self._expires_at = math.inf
        log.debug("access token for client %s, expires in %s s", self.client_id, lifetime)


def _json(response: httpx2.Response) -> dict[str, object]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
