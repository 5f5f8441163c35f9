"""What a toolwire resource server tells OAuth clients: its protected-resource metadata (RFC 9728), where that is
served, and the `WWW-Authenticate: Bearer` challenge (RFC 6750) of a 401/403 pointing at it."""

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from toolwire_shared.oauth.settings import OAuthSettings

METADATA_PATH = "/.well-known/oauth-protected-resource"


def metadata_url(resource: str) -> str:
    """Where RFC 9728 §3.1 puts the metadata of `resource`: the well-known path before the resource's path."""
    parts = urlsplit(resource)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, METADATA_PATH + path, "", ""))


def metadata_paths(resource: str, *more: str) -> list[str]:
    """The paths the metadata is served at: the bare well-known path, the one of `resource` (§3.1), and `more`."""
    return sorted({METADATA_PATH, urlsplit(metadata_url(resource)).path, *more})


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


def challenge(metadata: str, error: str | None, description: str = "", scope: str | None = None) -> str:
    """An RFC 6750 `WWW-Authenticate: Bearer` value pointing at the RFC 9728 metadata."""
    params = [f'resource_metadata="{metadata}"']
    if error:
        params.append(f'error="{error}"')
        if description:
            params.append(f'error_description="{_quotable(description)}"')
    if scope:
        params.append(f'scope="{_quotable(scope)}"')
    return "Bearer " + ", ".join(params)


def _quotable(text: str) -> str:
    """Inside a quoted-string: printable ASCII without quote or backslash (a kid or alg from the token is quoted)."""
    return "".join(c if " " <= c <= "~" and c not in '"\\' else "?" for c in text)
