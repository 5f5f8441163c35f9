"""Keyword options taken as a TypedDict (`**options: Unpack[...]`): one list of them, read where they are used. The
type checker sees a misspelt one; at run time it would be dropped unread, so the taker refuses it here."""

from collections.abc import Iterable, Mapping


def refuse_unknown(options: Mapping[str, object], allowed: Iterable[str], taker: str) -> None:
    """A misspelt option is a TypeError naming it and the ones there are, as for a misspelt keyword parameter
    (`taker`: who says so, e.g. "make_model()")."""
    known = frozenset(allowed)
    unknown = sorted(options.keys() - known)
    if unknown:
        raise TypeError(
            f"{taker} got unexpected keyword arguments: {', '.join(unknown)} (it takes {', '.join(sorted(known))})"
        )
