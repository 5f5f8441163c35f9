"""Text as both stores can hold it: PostgreSQL's TEXT and JSONB cannot hold U+0000, which a model's tool arguments
or a tool's result may contain, so a save of such a run would fail. Every string written from a run (the state
document, the text columns beside it, the approval events) goes through `escape`, and back through `unescape`.

NUL is written as ESCAPE + "0" and ESCAPE itself (a private-use character) as ESCAPE + "e", so the mapping is
reversible for any string, including one that holds the escape sequence. Strings with neither character are stored
as they are. A state document that needed escaping is marked (`MARK`), so documents saved before (whose text is
stored as it was) are never decoded; the text columns were made consistent by store migration 5."""

import json
import re
from collections.abc import Callable
from typing import Any

ESCAPE = "\ue000"
MARK = "io.toolwire/escaped"
"""Key of a state document whose strings were escaped."""
_ESCAPED = re.compile(ESCAPE + "([e0])")
_JSON_NUL = "\\u0000"
"""How NUL appears in JSON text (also matches an escaped backslash before "u0000": then escaping is a no-op)."""


def escape(text: str) -> str:
    if ESCAPE not in text and "\x00" not in text:
        return text
    return text.replace(ESCAPE, ESCAPE + "e").replace("\x00", ESCAPE + "0")


def unescape(text: str) -> str:
    if ESCAPE not in text:
        return text
    return _ESCAPED.sub(lambda m: "\x00" if m.group(1) == "0" else ESCAPE, text)


def escape_opt(text: str | None) -> str | None:
    return None if text is None else escape(text)


def unescape_opt(text: str | None) -> str | None:
    return None if text is None else unescape(text)


def _tree(value: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {fn(k): _tree(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [_tree(v, fn) for v in value]
    return value


def escape_document(body: str) -> str:
    """The JSON document `body` with every string (keys too) escaped and marked, when any needs it; else as is."""
    if _JSON_NUL not in body and ESCAPE not in body:
        return body
    escaped = _tree(json.loads(body), escape)
    escaped[MARK] = 1
    return json.dumps(escaped, ensure_ascii=False, separators=(",", ":"))


def unescape_document(document: dict[str, Any]) -> dict[str, Any]:
    """A loaded document as it was before `escape_document`."""
    if not document.pop(MARK, None):
        return document
    unescaped: dict[str, Any] = _tree(document, unescape)
    return unescaped
