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
The `[oauth]` table is read, and tokens verified, by `toolwire_shared.oauth` (the agent doors verify them too).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from toolwire_server.uris import canonical
from toolwire_shared.oauth.settings import ASYMMETRIC_ALGORITHMS, OAUTH_EXAMPLE, OAuthSettings, parse_oauth
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

__all__ = ["ASYMMETRIC_ALGORITHMS", "TOKENS_ENV", "AccessConfigError", "OAuthSettings"]


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
                f"Add one:\n{OAUTH_EXAMPLE}"
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


def load_access(path: str | Path) -> Access:
    return parse_access(*read_config(path))


def access_from_env() -> Access | None:
    found = config_from_env()
    return None if found is None else parse_access(*found)
