"""Who calls an agent door (`toolwire agent serve --a2a | --ag-ui`), as the tool server decides who calls /mcp: a
bearer token of the tokens file, or, with its `[oauth]` table, a JWT access token verified by the tool server's
verifier (verifier.py), whose subject names a caller of the file (an A2A door's agent, an AG-UI door's person).
The door serves its protected-resource metadata (RFC 9728) without a token, and answers a 401/403 with the
`WWW-Authenticate` challenge pointing at it, as /mcp does."""

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from starlette.applications import Starlette
from starlette.types import Receive, Scope, Send

from toolwire_shared.oauth.keys import refresh_in_lifespan
from toolwire_shared.oauth.resource import challenge, metadata, metadata_paths
from toolwire_shared.oauth.settings import OAuthSettings, parse_oauth
from toolwire_shared.oauth.verifier import OAuthVerifier, Refusal
from toolwire_shared.tokens import AccessConfigError, find_token

Caller = TypeVar("Caller")


@dataclass(frozen=True)
class Callers(Generic[Caller]):
    """The callers of a door: bearer token -> caller, and with `oauth`, the OAuth subject -> caller."""

    tokens: Mapping[str, Caller]
    oauth: OAuthSettings | None = None
    subjects: Mapping[str, Caller] = field(default_factory=dict)

    def login(self) -> str:
        """How callers log in, for the line a door prints when it starts."""
        said = f"bearer tokens of {len(self.tokens)}"
        if self.oauth is not None:
            said += f", OAuth access tokens from {self.oauth.issuer} for {self.oauth.resource}"
        return said


def oauth_of(data: Mapping[str, object], origin: str, subjects: Mapping[str, object]) -> OAuthSettings | None:
    """The file's `[oauth]` table, read as the tool server reads it; a `subject` with no table is one line."""
    if "oauth" in data:
        return parse_oauth(data["oauth"], origin)
    if subjects:
        raise AccessConfigError(
            f"{origin}: a subject names an OAuth identity ({', '.join(sorted(subjects))}), but there is no [oauth] "
            'table: add one, e.g.\n[oauth]\nissuer = "https://auth.example.com"\nresource = "https://agent.example.com/"'
        )
    return None


class CallerAuth(Generic[Caller]):
    """A door's check of its callers: `metadata()` answers the RFC 9728 paths, `identify()` finds the caller or
    sends the refusal (401 without a token or with a refused one, 403 for a missing scope or an unknown subject,
    503 when the issuer's keys cannot be fetched)."""

    def __init__(self, callers: Callers[Caller], name: str, what: str) -> None:
        self.callers = callers
        settings = callers.oauth
        self.verifier = OAuthVerifier(settings, callers.subjects, what=what) if settings is not None else None
        self.document = metadata(settings, name) if settings is not None else None
        self.paths = metadata_paths(settings.resource) if settings is not None else []

    def refresh_keys_while(self, app: Starlette) -> None:
        """The issuer's keys refreshed in the background for as long as `app` runs (as the tool server's)."""
        if self.verifier is not None:
            refresh_in_lifespan(app, self.verifier.keys)

    async def metadata(self, scope: Scope, send: Send) -> bool:
        """True once the metadata document is sent: a GET of one of its paths (never behind a token)."""
        if self.document is None or scope["method"] != "GET" or scope["path"] not in self.paths:
            return False
        await _send_json(send, 200, self.document, {})
        return True

    async def identify(self, scope: Scope, receive: Receive, send: Send) -> Caller | None:
        """The caller of this request, or None once its refusal is sent."""
        auth = ""
        for name, value in scope["headers"]:
            if name.lower() == b"authorization":
                auth = value.decode("latin-1")
        scheme, _, token = auth.partition(" ")
        token = token.strip() if scheme.lower() == "bearer" else ""
        caller = find_token(self.callers.tokens, token) if token else None
        if caller is not None:
            return caller
        if token and self.verifier is not None:
            verdict = await self.verifier.verify(token)
            if not isinstance(verdict, Refusal):
                return verdict
            status, error = verdict.status, verdict.error
            headers = {}
            if status in (401, 403):
                scheme_error = error if error != "forbidden" else None
                metadata = self.verifier.metadata_url
                headers["www-authenticate"] = challenge(metadata, scheme_error, verdict.description, verdict.scope)
            await _send_json(send, status, {"error": verdict.message}, headers)
            return None
        problem = "no bearer token was sent" if not auth else "the bearer token is not recognised"
        how = "a token of the tokens file"
        if self.verifier is None:
            header = 'Bearer realm="toolwire"'
        else:
            s, where = self.verifier.settings, self.verifier.metadata_url
            how += f", or an OAuth access token from {s.issuer} for the resource {s.resource} (how to get one: {where})"
            header = challenge(where, "invalid_token" if auth else None, problem)
        message = f"unauthorized: {problem}. Send the header 'Authorization: Bearer <token>' with {how}."
        await _send_json(send, 401, {"error": message}, {"www-authenticate": header})
        return None


async def _send_json(send: Send, status: int, body: object, headers: dict[str, str]) -> None:
    payload = json.dumps(body).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw += [(k.encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": payload})
