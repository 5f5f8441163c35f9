"""Tool search's ranker and its one tool, shared by the client's deferred loading (tools/tool_search.py) and the
gateway's discovery mode: BM25 (Okapi) over each tool's name, description and parameter names and descriptions.

A small BM25 of our own rather than `rank-bm25` (unmaintained since 2022) or `bm25s` (numpy and scipy for a few
hundred short documents): the catalog is a few hundred tools, indexed once per tool listing, and a query over 500
tools is a few hundred dictionary lookups."""

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from toolwire_shared.tools import ToolSpec

SEARCH_TOOL = "search_tools"
DEFAULT_LIMIT = 5
MOST_RESULTS = 20
K1, B = 1.2, 0.75
NAME_WEIGHT = 3
"""A word of the tool's name counts as this many words of its description: a name says what the tool is for."""

STOP_WORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "for",
        "from",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "with",
        "will",
        "you",
        "your",
    }
)

SEARCH_SPEC = ToolSpec(
    name=SEARCH_TOOL,
    description=(
        "Find the tools for a job among more tools than are listed here. Give a few words of what you want to do "
        "(or a tool's name); the best matches' names and one-line descriptions come back, and their full "
        "definitions are offered from your next turn on: then call them by name."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What the tool should do, in a few words, or its name."},
            "limit": {
                "type": "integer",
                "description": f"How many tools to find (default {DEFAULT_LIMIT}).",
                "default": DEFAULT_LIMIT,
                "minimum": 1,
                "maximum": MOST_RESULTS,
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    },
)


def words(text: str) -> list[str]:
    """Lower-case words of `text`, camelCase and snake_case split, stop words dropped, a plural's `s` taken off."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    found: list[str] = []
    for word in re.findall(r"[a-z0-9]+", spaced.lower()):
        if word in STOP_WORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        found.append(word)
    return found


def tool_words(spec: ToolSpec) -> list[str]:
    """What a tool is found by: its name (weighted), its description, its parameters' names and descriptions."""
    found = words(spec.name) * NAME_WEIGHT + words(spec.description)
    properties = spec.input_schema.get("properties")
    if isinstance(properties, dict):
        for name, schema in properties.items():
            found += words(str(name))
            if isinstance(schema, dict) and isinstance(schema.get("description"), str):
                found += words(schema["description"])
    return found


def one_line(description: str, most: int = 160) -> str:
    """The first line (or sentence) of a description, at most `most` characters."""
    line = description.strip().split("\n", 1)[0].strip()
    sentence = re.split(r"(?<=[.!?])\s", line, maxsplit=1)[0]
    return sentence if len(sentence) <= most else sentence[: most - 1].rstrip() + "…"


class ToolIndex:
    """BM25 over a fixed list of tools (made again when the list changes). `search` never returns a tool that was
    not given: callers index only what the run or agent may call."""

    def __init__(self, specs: Iterable[ToolSpec]):
        self.specs: list[ToolSpec] = list(specs)
        documents = [Counter(tool_words(spec)) for spec in self.specs]
        lengths = [sum(terms.values()) for terms in documents]
        mean = (sum(lengths) / len(lengths)) if lengths else 1.0
        n = len(self.specs)
        self._postings: dict[str, list[tuple[int, float]]] = {}
        """Term -> (tool, its BM25 weight there): a query adds up its terms' postings, nothing else."""
        for i, terms in enumerate(documents):
            norm = K1 * (1 - B + B * lengths[i] / mean)
            for term, tf in terms.items():
                self._postings.setdefault(term, []).append((i, tf * (K1 + 1) / (tf + norm)))
        for term, posted in self._postings.items():
            idf = math.log(1 + (n - len(posted) + 0.5) / (len(posted) + 0.5))
            self._postings[term] = [(i, idf * weight) for i, weight in posted]
        self._by_name = {spec.name.lower(): i for i, spec in enumerate(self.specs)}

    def search(self, query: str, limit: int = DEFAULT_LIMIT) -> list[ToolSpec]:
        """The best `limit` matches, best first (a tool named exactly by the query first of all); none for a query
        that shares no word with any tool."""
        scores: dict[int, float] = {}
        for term in set(words(query)):
            for i, weight in self._postings.get(term, ()):
                scores[i] = scores.get(i, 0.0) + weight
        exact = self._by_name.get(query.strip().lower())
        if exact is not None:
            scores[exact] = math.inf
        ranked = sorted(scores, key=lambda i: (-scores[i], self.specs[i].name))
        return [self.specs[i] for i in ranked[:limit]]


class BadSearch(ValueError):
    """A search_tools call whose arguments are not a query and a limit: said to the caller in one line."""


def search_arguments(arguments: dict[str, Any]) -> tuple[str, int]:
    """(query, limit) of a search_tools call; BadSearch says what a correct call looks like."""
    query, limit = arguments.get("query"), arguments.get("limit", DEFAULT_LIMIT)
    unknown = sorted(set(arguments) - {"query", "limit"})
    example = 'e.g. {"query": "read a file", "limit": 5}'
    if unknown:
        raise BadSearch(f"search_tools takes only `query` and `limit`, not {unknown[0]!r}: {example}")
    if not isinstance(query, str) or not query.strip():
        raise BadSearch(f"search_tools needs a `query`: a few words of what the tool should do, {example}")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MOST_RESULTS:
        raise BadSearch(f"search_tools' `limit` is a whole number from 1 to {MOST_RESULTS}: {example}")
    return query, limit


def search_answer(query: str, found: Sequence[tuple[str, str]], then: str) -> str:
    """The text a search answers with: one `name: description` line per match, and what to do next (`then`)."""
    if not found:
        return f"No tool matches {query!r}. Try other words (what the tool does, or a part of its name)."
    lines = [f"- {name}: {line}" for name, line in found]
    return f"Tools matching {query!r}:\n" + "\n".join(lines) + f"\n{then}"
