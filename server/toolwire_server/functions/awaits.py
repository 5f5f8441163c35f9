"""Whether an async tool can ever suspend: read once from its code, so a call of one that cannot (an `async def`
that awaits nothing) skips the timeout's cancel scope (~5 µs a call). Nothing is lost: a timeout is delivered
only at an await, so such a call runs to its end with or without the scope, and it can open no scope of its own
that it then awaits in."""

import dis
import inspect
from collections.abc import Callable
from typing import Any

SUSPENDING = frozenset(
    {
        "YIELD_VALUE",  # every await, async for and async with of 3.11+ goes through it
        "YIELD_FROM",
        "SEND",
        "GET_AWAITABLE",
        "GET_AITER",
        "GET_ANEXT",
        "BEFORE_ASYNC_WITH",
        "END_ASYNC_FOR",
    }
)
"""The opcodes a coroutine may suspend at; any of them in its code and it is treated as one that awaits."""


def never_awaits(fn: Callable[..., Any]) -> bool:
    """True only for a plain `async def` whose own body has no await, `async for` or `async with`. Anything else
    (a sync function, a partial, a callable object, a wrapper that returns another coroutine) counts as awaiting."""
    code = getattr(fn, "__code__", None)
    if not inspect.iscode(code) or not code.co_flags & inspect.CO_COROUTINE:
        return False
    return not any(instruction.opname in SUSPENDING for instruction in dis.get_instructions(code))
