"""What a refused OAuth access token is told (verifier.py): one line a person can act on, saying what was wrong
and what a correct token is."""

from collections.abc import Iterable

from toolwire_shared.errors import clip, quoted


def article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


TOKEN_MALFORMED = "the bearer token is neither a token from the access config nor a well-formed JWT"
TOKEN_EXPIRED = "the access token has expired (exp)"
TOKEN_NOT_YET_VALID = "the access token is not valid yet (nbf or iat lies in the future)"
TOKEN_BAD_SIGNATURE = "the access token's signature does not verify against the issuer's keys"
SCOPE_MISSING = "the access token lacks a required scope"


def token_algorithm(alg: str, accepted: Iterable[str]) -> str:
    return f"the access token's algorithm {quoted(alg, 24)} is not accepted (accepted: {', '.join(accepted)})"


def token_unknown_key(kid: str | None) -> str:
    if kid is None:
        return "the access token names no signing key (kid) and the issuer publishes several"
    return f"the access token's signing key {quoted(kid, 60)} is not among the issuer's published keys"


def token_audience(resource: str) -> str:
    return f"the access token was issued for another resource: its aud must name {resource}"


def token_issuer(issuer: str) -> str:
    return f"the access token was not issued by {issuer} (iss)"


def token_lacks_claim(claim: str) -> str:
    return f"the access token has no '{clip(claim, 40)}' claim"


def token_refused(problem: str, issuer: str, metadata: str) -> str:
    return (
        f"{problem}. Send 'Authorization: Bearer <token>' with a current access token from {issuer} for this server "
        f"(its protected-resource metadata: {metadata})."
    )


def insufficient_scope(missing: Iterable[str], required: Iterable[str]) -> str:
    return (
        f"the access token is valid but lacks the scope(s) {', '.join(missing)}. Request a token with "
        f'scope "{" ".join(required)}" and send it again.'
    )


def unknown_subject(claim: str, value: str, what: str = "agent") -> str:
    return (
        f"the access token is valid, but its {clip(claim, 40)} {quoted(value, 80)} is no {what} of this server. "
        f"Ask its operator to add {article(what)} {what} with subject = {quoted(value, 80)} to the access config."
    )


def keys_unavailable(issuer: str) -> str:
    return (
        f"the signing keys of {issuer} cannot be fetched right now, so no access token can be checked; try again later."
    )
