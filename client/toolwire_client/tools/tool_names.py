"""The names users know of all the tools of a run, assigned at once from every (server, tool) pair listed, so that no
two tools ever share one and no server's tool takes a name that reads as another server's. Same listing, same names
(never listing order), so a resumed or replayed run sees the names it saw.

The rule (docs/security.md, "Tool names"):
1. a tool's own name, when no other server of the run lists it and it does not start with another server's prefix
   `OTHER__` (compared as wire names are made: `support.__x` reads as `support___x`);
2. otherwise `SERVER__TOOL`: two servers' `issue_refund` are `support__issue_refund` and `notes__issue_refund`, and a
   tool `support__issue_refund` that `notes` lists is `notes__support__issue_refund`;
3. a name that rules 1 and 2 give to two tools (`notes` lists a shared `x` and its own `notes__x`) is given to
   neither: each gets `_` and 8 hex digits of the SHA-256 of its server and tool name after it.
The wire names (toolwire_shared/wire_names.py) are made from these.
"""

import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from toolwire_shared.wire_names import HASH_CHARS

Pair = tuple[str, str]
"""(server name, the tool's name on that server)."""


@dataclass(frozen=True)
class ToolName:
    known: str
    """The one name of this tool in the run: in `execute_tool` spans, and what its wire name is made from."""
    aliases: frozenset[str]
    """What `--risky` and `--allow` match it by: its known name, `SERVER__TOOL`, and its own name unless that reads
    as another server's (so `--risky support__issue_refund` binds support's tool, never the one `notes` calls so)."""


def _plain(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)


def _suffixed(name: str, pair: Pair, digits: int) -> str:
    digest = hashlib.sha256("\0".join(pair).encode()).hexdigest()
    return f"{name}_{digest[:digits]}"


def known_names(pairs: Iterable[Pair]) -> dict[Pair, ToolName]:
    """Each (server, tool) pair (distinct) -> its names; distinct pairs get distinct known names."""
    pairs = list(dict.fromkeys(pairs))
    servers = {server for server, _ in pairs}
    counts = Counter(tool for _, tool in pairs)
    prefixes = {server: _plain(server) + "__" for server in servers}

    def squats(server: str, tool: str) -> bool:
        return any(_plain(tool).startswith(prefixes[other]) for other in servers if other != server)

    squatting = {pair for pair in pairs if squats(*pair)}
    base = {pair: (pair[1] if counts[pair[1]] == 1 and pair not in squatting else "__".join(pair)) for pair in pairs}
    taken = Counter(base.values())
    known = {pair: (name if taken[name] == 1 else _suffixed(name, pair, HASH_CHARS)) for pair, name in base.items()}
    digits = HASH_CHARS
    while len(set(known.values())) < len(known):  # a suffixed name that another tool has too: longer suffixes
        digits += HASH_CHARS
        seen = Counter(known.values())
        known = {p: _suffixed(base[p], p, digits) if seen[n] > 1 and n != base[p] else n for p, n in known.items()}
    return {
        pair: ToolName(name, frozenset({name, "__".join(pair)} | (set() if pair in squatting else {pair[1]})))
        for pair, name in known.items()
    }
