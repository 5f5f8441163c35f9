"""The `[oauth]` table of the tokens file (the tool server's `--tokens`/`--config`, and `agent serve`'s): which
JWT access tokens a toolwire resource server accepts. Read here once, for every server that verifies them
(verifier.py); the table's keys are described in docs/security.md.

    [oauth]
    issuer = "https://auth.example.com"           # the token's `iss`, exactly
    resource = "https://tools.example.com/mcp"    # this server's URL as clients call it; the token's `aud` must name it
    required_scopes = ["mcp:tools"]               # every one must be in the token's `scope` (else 403); default none
    token_url = "https://auth.example.com/token"  # optional: the issuer's token endpoint, named on an A2A Agent Card
"""

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from toolwire_shared.tokens import AccessConfigError

ASYMMETRIC_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
"""The JWT algorithms the server may accept: signatures checked with a public key only (never `none`, never HS*)."""


@dataclass(frozen=True)
class OAuthSettings:
    """The `[oauth]` table: which JWT access tokens this server accepts (see the module docstring)."""

    issuer: str
    resource: str
    jwks_url: str
    required_scopes: tuple[str, ...] = ()
    agent_claim: str = "sub"
    algorithms: tuple[str, ...] = ASYMMETRIC_ALGORITHMS
    leeway_s: float = 30.0
    """Clock skew allowed on `exp` and `nbf`."""
    jwks_refetch_s: float = 60.0
    """At most one JWKS fetch per this many seconds for an unknown `kid` (or after a failed fetch)."""
    jwks_max_age_s: float = 3600.0
    """Keys older than this are fetched again, in the background (a failure keeps the old ones)."""
    jwks_timeout_s: float = 5.0
    """One deadline for a whole JWKS fetch (connect, headers, every byte); only a token with no cached key waits."""
    token_url: str | None = None
    """Where a client gets a token (the issuer's token endpoint): the A2A Agent Card's OAuth flow must name it."""


OAUTH_EXAMPLE = (
    '[oauth]\nissuer = "https://auth.example.com"\nresource = "https://tools.example.com/mcp"\n'
    'required_scopes = ["mcp:tools"]'
)
_OAUTH_KEYS = {
    "issuer",
    "resource",
    "jwks_url",
    "required_scopes",
    "agent_claim",
    "algorithms",
    "leeway_s",
    "jwks_refetch_s",
    "jwks_max_age_s",
    "jwks_timeout_s",
    "token_url",
}


def parse_oauth(table: Any, origin: str) -> OAuthSettings:
    """The `[oauth]` table, checked: a mistake is one readable line, never a surprise at the first request."""
    where = f"{origin}: oauth"
    if not isinstance(table, dict):
        raise AccessConfigError(f"{where} must be a table. Example:\n{OAUTH_EXAMPLE}")
    unknown = sorted(set(table) - _OAUTH_KEYS)
    if unknown:
        raise AccessConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_OAUTH_KEYS))}"
        )
    issuer = _url(table, "issuer", where)
    resource = _url(table, "resource", where)
    jwks_url = _url(table, "jwks_url", where) if "jwks_url" in table else issuer.rstrip("/") + "/.well-known/jwks.json"
    scopes = _strings(table, "required_scopes", where, ())
    algorithms = _strings(table, "algorithms", where, ASYMMETRIC_ALGORITHMS)
    wrong = [a for a in algorithms if a not in ASYMMETRIC_ALGORITHMS]
    if wrong or not algorithms:
        raise AccessConfigError(
            f"{where}.algorithms: {', '.join(wrong) or '(empty)'} not accepted; choose from "
            f"{', '.join(ASYMMETRIC_ALGORITHMS)} (public-key signatures only: never none, never HS*)"
        )
    claim = table.get("agent_claim", "sub")
    if not isinstance(claim, str) or not claim:
        raise AccessConfigError(f'{where}.agent_claim must be a claim name such as "sub", "client_id" or "azp"')
    numbers = {key: _seconds(table, key, where, default) for key, default in _SECONDS.items()}
    if numbers["jwks_timeout_s"] <= 0:
        raise AccessConfigError(f"{where}.jwks_timeout_s must be a number of seconds above 0")
    token_url = _url(table, "token_url", where) if "token_url" in table else None
    return OAuthSettings(issuer, resource, jwks_url, scopes, claim, algorithms, **numbers, token_url=token_url)


_SECONDS = {"leeway_s": 30.0, "jwks_refetch_s": 60.0, "jwks_max_age_s": 3600.0, "jwks_timeout_s": 5.0}


def _url(table: dict[str, Any], key: str, where: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value:
        raise AccessConfigError(f"{where} needs '{key}', an https URL. Example:\n{OAUTH_EXAMPLE}")
    parts = urlsplit(value)
    loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
    if not parts.hostname or parts.fragment or not (parts.scheme == "https" or (parts.scheme == "http" and loopback)):
        raise AccessConfigError(
            f"{where}.{key} = {value!r}: expected an https URL without a fragment (http only on localhost)"
        )
    return value


def _strings(table: dict[str, Any], key: str, where: str, default: tuple[str, ...]) -> tuple[str, ...]:
    value = table.get(key, list(default))
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise AccessConfigError(f"{where}.{key} must be a list of non-empty strings")
    return tuple(value)


def _seconds(table: dict[str, Any], key: str, where: str, default: float) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise AccessConfigError(f"{where}.{key} must be a number of seconds, 0 or more")
    return float(value)
