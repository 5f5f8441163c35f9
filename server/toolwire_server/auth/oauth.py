"""MCP authorization on /mcp: this server as an OAuth 2.1 resource server. The token is verified by
toolwire_shared.oauth (the agent doors verify theirs there too), its `agent_claim` naming an agent's Grant, the
same Grant a static token gives; the protected-resource metadata (RFC 9728) names the issuer.

Why our Gate (transports/http.py) and not the SDK's `token_verifier=`/`AuthSettings`: the SDK's bearer check runs
inside its app, behind the Gate and the SessionGuard, which need the caller's Grant first (the session caps would
count callers nobody has authenticated yet); its refusals are `{"error", "error_description"}` bodies, not the
readable ones the Gate sends; and static tokens would have to pass through it as well. So the Gate stays the one
auth stack: it asks `OAuthVerifier` about a token no static entry knows, answers 401/403 with RFC 6750/9728
`WWW-Authenticate` headers, and serves the metadata route itself."""

from toolwire_server.auth.access import Grant
from toolwire_shared.oauth.keys import JWKS_DEADLINE_S, KeysUnavailable, SigningKeys, refresh_in_lifespan
from toolwire_shared.oauth.resource import METADATA_PATH, challenge, metadata, metadata_paths, metadata_url
from toolwire_shared.oauth.verifier import OAuthVerifier, Refusal

__all__ = [
    "JWKS_DEADLINE_S",
    "METADATA_PATH",
    "KeysUnavailable",
    "OAuthVerifier",
    "Refusal",
    "SigningKeys",
    "challenge",
    "metadata",
    "metadata_paths",
    "metadata_url",
    "refresh_in_lifespan",
]

GrantVerifier = OAuthVerifier[Grant]
"""The tool server's verifier: a token's subject names an agent's Grant."""
