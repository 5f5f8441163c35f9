"""Who may call what: bearer tokens map to an agent and the glob patterns of the tools it may use.

Config (TOML or JSON file, or the same JSON in the env var TOOLWIRE_TOKENS):

    [agents.support]
    token = "tok-support"            # or token_env = "SUPPORT_TOKEN" to keep the secret out of the file
    tools = ["get_order", "search_*"]

OAuth 2.1 (MCP authorization, HTTP only): an `[oauth]` table makes the server also accept JWT access tokens from
one issuer. The token's `agent_claim` (default `sub`; for a client-credentials token that is the client) picks the
agent whose `subject` it is, and that agent's `tools` apply: the same Grant as its static token, if it has one.

    [oauth]
    issuer = "https://auth.example.com"           # the token's `iss`, exactly
    resource = "https://tools.example.com/mcp"    # this server's URL as clients call it; the token's `aud` must name it
    required_scopes = ["mcp:tools"]               # every one must be in the token's `scope` (else 403); default none
    # jwks_url = "https://auth.example.com/.well-known/jwks.json"   # the default: <issuer>/.well-known/jwks.json
    # agent_claim = "sub"    algorithms = ["RS256", "ES256", ...]    leeway_s = 30    jwks_refetch_s = 60
    # jwks_timeout_s = 5     (one deadline for a whole JWKS fetch; tokens with a cached key never wait for one)

    [agents.support]
    subject = "support-client"        # the agent_claim value of its tokens; `token` is then optional
    tools = ["get_order", "search_*"]

The JWKS URL is not discovered from the issuer's metadata: one explicit URL, fetched when a token first needs it,
fails in one place (set `jwks_url` for an issuer that publishes its keys elsewhere, e.g. Keycloak's `.../certs`).
Validation and the protected-resource metadata are in `toolwire_server.auth.oauth`.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from toolwire_server.uris import canonical
from toolwire_shared.tokens import EXAMPLE as _EXAMPLE
from toolwire_shared.tokens import (  # the tokens file itself is shared with `toolwire ui`
    TOKENS_ENV,
    AccessConfigError,
    agent_entries,
    agent_token,
    config_from_env,
    find_token,
    read_config,
)

__all__ = ["TOKENS_ENV", "AccessConfigError"]
ASYMMETRIC_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
"""The JWT algorithms the server may accept: signatures checked with a public key only (never `none`, never HS*)."""


@dataclass(frozen=True)
class Grant:
    agent: str
    patterns: tuple[str, ...]

    def allows(self, tool: str) -> bool:
        return "*" in self.patterns or any(fnmatchcase(tool, pattern) for pattern in self.patterns)

    def allows_uri(self, uri: str) -> bool:
        """A resource URI, matched in canonical form (uris.py): `files://public/*` must not match a URI that a
        template would decode to a path outside `public`. One that climbs out is never allowed."""
        target = canonical(uri)
        return target is not None and self.allows(target)


ALL_TOOLS = Grant(agent="local", patterns=("*",))
"""The grant on stdio without `--agent`: the launching process is the trust boundary."""


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


@dataclass(frozen=True)
class Access:
    grants: dict[str, Grant]
    """token -> grant"""
    oauth: OAuthSettings | None = None
    subjects: dict[str, Grant] = field(default_factory=dict)
    """OAuth: value of the token's `agent_claim` -> grant"""

    def grant_for_token(self, token: str) -> Grant | None:
        return find_token(self.grants, token)

    def grant_for_agent(self, agent: str) -> Grant:
        everyone = [*self.grants.values(), *self.subjects.values()]
        for grant in everyone:
            if grant.agent == agent:
                return grant
        known = ", ".join(sorted({g.agent for g in everyone})) or "(none)"
        raise AccessConfigError(f"no agent named '{agent}' in the access config; agents: {known}")


def check_grants(
    access: Access, tools: Sequence[str], others: Sequence[str] = (), prefixes: Sequence[str] = ()
) -> None:
    """Every pattern of every agent must match a registered tool (or prompt name, resource URI or URI template,
    `others`): a grant naming nothing is a typo, said when the server starts rather than as a tool that is never
    listed. `*` always passes, and so does a resource URI pattern (`files://public/*`): a template's URIs cannot be
    listed to check it against, and so does one under a `prefix` of tools that come later (an upstream's)."""
    agents = {grant.agent: grant for grant in [*access.grants.values(), *access.subjects.values()]}
    for agent, grant in sorted(agents.items()):
        for pattern in grant.patterns:
            if pattern == "*" or "://" in pattern or any(fnmatchcase(name, pattern) for name in [*tools, *others]):
                continue
            if any(pattern.startswith(prefix) or fnmatchcase(prefix, pattern) for prefix in prefixes):
                continue
            what = "matches" if any(c in pattern for c in "*?[") else "names"
            listed = ", ".join(sorted(tools)) or "none"
            raise AccessConfigError(
                f"the access config grants agent '{agent}' {pattern!r}, which {what} no tool of this server "
                f"(its tools: {listed})"
            )


_OAUTH_EXAMPLE = (
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
}


def parse_access(data: dict[str, Any], origin: str) -> Access:
    agents = agent_entries(data, origin)
    oauth = parse_oauth(data["oauth"], origin) if "oauth" in data else None
    grants: dict[str, Grant] = {}
    subjects: dict[str, Grant] = {}
    for agent, entry in agents.items():
        token = agent_token(agent, entry, origin)
        subject = entry.get("subject")
        tools = entry.get("tools")
        if subject is not None and (not isinstance(subject, str) or not subject):
            raise AccessConfigError(f"{origin}: agents.{agent}.subject must be a non-empty string")
        if subject is not None and oauth is None:
            raise AccessConfigError(
                f"{origin}: agents.{agent}.subject names an OAuth identity, but there is no [oauth] table. "
                f"Add one:\n{_OAUTH_EXAMPLE}"
            )
        if subject is None and (not isinstance(token, str) or not token):
            raise AccessConfigError(f"{origin}: agents.{agent} needs a non-empty 'token'. Example:\n{_EXAMPLE}")
        if token is not None and (not isinstance(token, str) or not token):
            raise AccessConfigError(f"{origin}: agents.{agent}.token must be a non-empty string")
        if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
            raise AccessConfigError(
                f"{origin}: agents.{agent}.tools must be a list of glob patterns. Example:\n{_EXAMPLE}"
            )
        grant = Grant(agent=str(agent), patterns=tuple(tools))
        if token is not None:
            if token in grants:
                raise AccessConfigError(f"{origin}: agents.{agent} reuses the token of agent '{grants[token].agent}'")
            grants[token] = grant
        if subject is not None:
            if subject in subjects:
                raise AccessConfigError(
                    f"{origin}: agents.{agent} reuses the subject of agent '{subjects[subject].agent}'"
                )
            subjects[subject] = grant
    return Access(grants, oauth, subjects)


def parse_oauth(table: Any, origin: str) -> OAuthSettings:
    """The `[oauth]` table, checked: a mistake is one readable line, never a surprise at the first request."""
    where = f"{origin}: oauth"
    if not isinstance(table, dict):
        raise AccessConfigError(f"{where} must be a table. Example:\n{_OAUTH_EXAMPLE}")
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
    return OAuthSettings(issuer, resource, jwks_url, scopes, claim, algorithms, **numbers)


_SECONDS = {"leeway_s": 30.0, "jwks_refetch_s": 60.0, "jwks_max_age_s": 3600.0, "jwks_timeout_s": 5.0}


def _url(table: dict[str, Any], key: str, where: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value:
        raise AccessConfigError(f"{where} needs '{key}', an https URL. Example:\n{_OAUTH_EXAMPLE}")
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


def load_access(path: str | Path) -> Access:
    return parse_access(*read_config(path))


def access_from_env() -> Access | None:
    found = config_from_env()
    return None if found is None else parse_access(*found)
