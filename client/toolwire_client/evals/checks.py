"""How a task's outcome is judged: the final answer (exact, contains, regex, or a Python callable) and the path."""

import importlib
import inspect
import re
from collections.abc import Callable
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, model_validator

from toolwire_client.run.state import RunState

CHECK_EXAMPLE = 'check = { contains = "5900" }   # or exact = "...", regex = "...", callable = "mymodule:is_right"'


class AnswerCheck(BaseModel):
    """Exactly one of exact, contains, regex, callable."""

    model_config = ConfigDict(extra="forbid")

    exact: str | None = None
    contains: str | None = None
    regex: str | None = None
    callable: str | None = None
    """'module:function', called with the answer (and the RunState if it takes two arguments); truthy passes."""
    ignore_case: bool = False

    @model_validator(mode="after")
    def _one_kind(self) -> "AnswerCheck":
        given = [k for k in ("exact", "contains", "regex", "callable") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                f"a check needs exactly one of exact, contains, regex, callable (got {given or 'none'}). "
                f"A correct check: {CHECK_EXAMPLE}"
            )
        if self.regex is not None:
            try:
                re.compile(self.regex)
            except re.error as exc:
                raise ValueError(f"regex {self.regex!r} does not compile: {exc}") from exc
        if self.callable is not None:
            resolve_callable(self.callable)
        return self

    def describe(self) -> str:
        for kind in ("exact", "contains", "regex", "callable"):
            value = getattr(self, kind)
            if value is not None:
                return f"{kind} {value!r}"
        return "?"

    def passes(self, answer: str | None, state: RunState) -> bool:
        if answer is None:
            return False
        text = answer.strip()
        fold: Callable[[str], str] = str.casefold if self.ignore_case else str
        if self.exact is not None:
            return fold(text) == fold(self.exact.strip())
        if self.contains is not None:
            return fold(self.contains) in fold(text)
        if self.regex is not None:
            return re.search(self.regex, text, re.IGNORECASE if self.ignore_case else 0) is not None
        assert self.callable is not None
        fn = resolve_callable(self.callable)
        takes_state = len(inspect.signature(fn).parameters) >= 2
        return bool(fn(answer, state) if takes_state else fn(answer))


def resolve_callable(spec: str) -> Callable[..., Any]:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"callable {spec!r} must be 'module:function', e.g. 'mychecks:total_is_right'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"callable {spec!r}: cannot import module '{module_name}' ({exc})") from exc
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ValueError(f"callable {spec!r}: module '{module_name}' has no function '{attr}'")
    return cast(Callable[..., Any], fn)


class PathExpectation(BaseModel):
    """The path a good run takes: tools in order, and ceilings on steps, cost, replans and reviews."""

    model_config = ConfigDict(extra="forbid")

    tools: list[str] | None = None
    max_steps: int | None = None
    max_cost_usd: float | None = None
    max_replans: int | None = None
    """Plan-and-execute: at most this many new plans after failed steps (0: the first plan held)."""
    max_reviews: int | None = None
    """Reflection: at most this many review calls (1: the first reviewed draft was approved or final)."""
    skills: list[str] | None = None
    """Skills: exactly these skills loaded, in this order ([]: none)."""


def called_tools(state: RunState) -> list[str]:
    """Tool names in the order the model asked for them (within a step, in the order of its calls)."""
    return [call.name for step in state.steps for call in step.tool_calls]


def right_tools(expected: list[str], called: list[str]) -> bool:
    """The same set of tools: every expected tool was called and no other."""
    return set(expected) == set(called)


def right_order(expected: list[str], called: list[str]) -> bool:
    """The expected tools appear in this order in what was called (other calls, such as repairs, may sit between)."""
    remaining = iter(called)
    return all(any(name == c for c in remaining) for name in expected)
