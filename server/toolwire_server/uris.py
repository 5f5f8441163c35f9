"""Resource URIs in one canonical form before anything matches them: a grant's patterns, the static table, the
templates. Without it a grant matched the URI as sent while a template variable reached the function decoded, so
`files://public/../private/x` (or `%2E%2E`, `..%2F`) passed a `files://public/*` grant and read the private file.

`canonical(uri)` (RFC 3986 §6.2.2): percent-encoded unreserved characters decoded (`%2E` -> `.`), the other escapes
in upper case, the path's dot segments removed (§5.2.4). It refuses (None) a URI that still climbs out: a `..` above
the root of its path, an encoded `/` or `\\` (or any `\\`) in the authority or path, which a function decoding the
value would read as a separator. Scheme and authority keep their case: MCP URIs often carry an id there
(`orders://A123`). The query and fragment are only percent-normalised.

`unsafe_value(value, multi_segment=...)`: the rule for one template variable's decoded value (resources.py)."""

import re
import string
from urllib.parse import unquote

_PARTS = re.compile(r"(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?", re.DOTALL)
"""RFC 3986 appendix B: scheme, authority, path, query, fragment (never fails; no stripping, unlike urlsplit)."""
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")
_SEPARATORS = ("%2F", "%5C", "\\")
_DECODINGS = 3
"""How often a value is decoded again to look for a hidden separator (`%252F` is `/` after two decodings)."""


def canonical(uri: str) -> str | None:
    """`uri` in canonical form, or None if it climbs out of where it points (see the module docstring)."""
    found = _PARTS.fullmatch(uri)
    if found is None:  # pragma: no cover - every string matches
        return None
    scheme, authority, path, query, fragment = found.groups()
    authority = None if authority is None else _unescape_unreserved(authority)
    path = _unescape_unreserved(path)
    if any(s in (authority or "") + path for s in _SEPARATORS):
        return None
    path = _remove_dot_segments(path)
    if path is None or (authority is None and path.startswith("//")):  # `x:/.//y` would gain an authority
        return None
    text = "" if scheme is None else scheme + ":"
    text += "" if authority is None else "//" + authority
    text += path
    text += "" if query is None else "?" + _unescape_unreserved(query)
    return text + ("" if fragment is None else "#" + _unescape_unreserved(fragment))


def unsafe_value(value: str, *, multi_segment: bool) -> bool:
    """Whether a template variable's value could lead a function out of where the URI points: a `/` in a variable
    that is one segment (`{var}`, `{/var*}`, query variables), and in any variable a `\\`, a `.` or `..` segment,
    or (multi-segment `{+var}`/`{#var}`) a leading `/`, which `Path(root) / value` reads as absolute. Checked as
    decoded and as decoded again, for a function that decodes once more."""
    seen = value
    for _ in range(_DECODINGS):
        segments = seen.split("/")
        if "\\" in seen or any(s in (".", "..") for s in segments):
            return True
        if len(segments) > 1 and (not multi_segment or not segments[0]):
            return True
        decoded = unquote(seen)
        if decoded == seen:
            return False
        seen = decoded
    return True  # still decoding to something new: nobody means that


def _unescape_unreserved(text: str) -> str:
    def one(escape: re.Match[str]) -> str:
        char = chr(int(escape.group(1), 16))
        return char if char in _UNRESERVED else "%" + escape.group(1).upper()

    return _ESCAPE.sub(one, text)


def _remove_dot_segments(path: str) -> str | None:
    """RFC 3986 §5.2.4, except that a `..` above the root is refused (None) instead of dropped."""
    absolute = path.startswith("/")
    segments = path.split("/")[1:] if absolute else path.split("/")
    kept: list[str] = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == "..":
            if not kept:
                return None
            kept.pop()
        elif segment != ".":
            kept.append(segment)
            continue
        if last:  # `a/b/..` and `a/.` end in a slash
            kept.append("")
    return ("/" if absolute else "") + "/".join(kept)
