"""Reading the exception groups anyio's task groups wrap an error in: the first of a kind, the innermost leaf, every
leaf. Pure (it imports no MCP), so the CLI's one-line error path uses it without loading the SDK."""

from typing import TypeVar

E = TypeVar("E", bound=BaseException)


def first(exc: BaseException, kind: type[E]) -> E | None:
    """The first `kind` in an exception, the groups it is in or the errors that caused it."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, kind):
            return current
        todo += list(getattr(current, "exceptions", ()))
        todo += [e for e in (current.__cause__, current.__context__) if e is not None]
    return None


def innermost(exc: BaseException) -> BaseException:
    """The first leaf of an exception group (a task group wraps a connection's error in one)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def why(exc: BaseException) -> str:
    """The innermost readable reason of an exception: `OSError: ...`, or its type alone when it says nothing."""
    exc = innermost(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def leaves(exc: BaseException) -> list[BaseException]:
    """Every leaf of an exception group (the exception itself when it is none)."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
    return [exc]
