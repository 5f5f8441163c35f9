"""A toolwire server as an OAuth 2.1 resource server: a JWT access token from the configured issuer is checked
(signature against the issuer's JWKS, `iss`, `aud` == the server's resource URL, `exp`/`nbf`, an allow-list of
public-key algorithms, the required scopes), and its `agent_claim` names a subject of the tokens file: the tool
server's agent (its Grant), an A2A door's calling agent, an AG-UI door's person. One verifier for all of them, so a
token one accepts is checked as the others check it."""

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import jwt

from toolwire_shared import errors
from toolwire_shared.oauth import texts
from toolwire_shared.oauth.keys import KeysUnavailable, SigningKeys
from toolwire_shared.oauth.resource import metadata_url
from toolwire_shared.oauth.settings import OAuthSettings

log = logging.getLogger("toolwire.oauth")

Subject = TypeVar("Subject")
"""What a token's subject names on this server: the tool server's Grant, a door's agent name or Person."""


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


class OAuthVerifier(Generic[Subject]):
    """A JWT access token -> what its subject names here (`subjects`, keyed by the `agent_claim` value), or the
    Refusal to answer. `what` names a subject in a refusal ("agent", "person")."""

    def __init__(
        self,
        settings: OAuthSettings,
        subjects: Mapping[str, Subject],
        keys: SigningKeys | None = None,
        what: str = "agent",
    ) -> None:
        self.settings, self.subjects, self.what = settings, subjects, what
        self.keys = keys or SigningKeys(
            settings.jwks_url,
            refetch_s=settings.jwks_refetch_s,
            max_age_s=settings.jwks_max_age_s,
            deadline_s=settings.jwks_timeout_s,
        )
        self.metadata_url = metadata_url(settings.resource)
        resource = settings.resource.rstrip("/")
        self._audiences = [resource, resource + "/"]  # the one resource, spelt with or without its trailing slash

    async def verify(self, token: str) -> "Subject | Refusal":
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
        if agent not in self.subjects:
            log.warning(
                "403: a valid token's %s %s is no %s in the access config",
                s.agent_claim,
                errors.quoted(agent),
                self.what,
            )
            return Refusal(403, "forbidden", "", texts.unknown_subject(s.agent_claim, agent, self.what))
        return self.subjects[agent]

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
