"""The names the model sees and calls: every tool's name made valid for every provider toolwire speaks to, and
unique, from the tools' own names alone (never from listing order), so a tool keeps its wire name on every step of a
run and after a resume or a replay.

The rule (the strictest provider rule, OpenAI's and Anthropic's `^[a-zA-Z0-9_-]{1,64}$`):
1. a name that already fits is its own wire name;
2. otherwise each character outside `a-zA-Z0-9_-` becomes `_`; if that fits in 64 characters and no other tool has
   or gets the same result, it is the wire name (`files.read` -> `files_read`);
3. otherwise (too long, or a clash) the first 55 characters of step 2's result, `_`, and 8 hex digits of the
   SHA-256 of the name (`<55 characters>_1f2e3d4c`).
"""

import hashlib
import re
from collections import Counter
from collections.abc import Iterable

WIRE_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
"""What every supported provider accepts as a tool name (OpenAI Chat and Responses: 64; Anthropic: 64 too)."""
MAX_WIRE_CHARS = 64
HASH_CHARS = 8


def fits(name: str) -> bool:
    return WIRE_NAME.fullmatch(name) is not None


def _sanitised(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name) or "tool"


def _hashed(name: str, digits: int = HASH_CHARS) -> str:
    digest = hashlib.sha256(name.encode()).hexdigest()[:digits]
    return f"{_sanitised(name)[: MAX_WIRE_CHARS - digits - 1]}_{digest}"


def wire_names(names: Iterable[str]) -> dict[str, str]:
    """Each of `names` (distinct) -> its wire name; distinct names get distinct wire names."""
    names = list(dict.fromkeys(names))
    valid = {name for name in names if fits(name)}
    tried = {name: _sanitised(name) for name in names if name not in valid}
    counts = Counter(tried.values())
    out = {name: name for name in valid}
    for name, candidate in tried.items():
        plain = len(candidate) <= MAX_WIRE_CHARS and counts[candidate] == 1 and candidate not in valid
        out[name] = candidate if plain else _hashed(name)
    digits = HASH_CHARS
    while len(set(out.values())) < len(out):  # a clash of hashes (or with a name that looks like one): longer ones
        digits += 8
        seen = Counter(out.values())
        out = {name: (_hashed(name, digits) if seen[wire] > 1 and wire != name else wire) for name, wire in out.items()}
    return out
