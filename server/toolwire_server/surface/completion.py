"""Completion of prompt arguments and template variables: a `complete=` callable, sync or async, asked for the
values that fit what the user has typed so far."""

import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp.shared.exceptions import MCPError

from toolwire_server import texts
from toolwire_shared import errors

Completer = Callable[[str, str], Iterable[str] | Awaitable[Iterable[str]]]
"""(argument or variable name, the partial value) -> candidate values."""

MAX_VALUES = 100
"""MCP's cap on the values one completion answer carries; `total` and `hasMore` tell the rest."""


async def complete(completer: Completer | None, argument: str, value: str) -> types.CompleteResult:
    """What the completer offers (nothing without one); its failure is a JSON-RPC error naming the argument."""
    if completer is None:
        return types.CompleteResult(completion=types.Completion(values=[]))
    try:
        if inspect.iscoroutinefunction(completer):
            found: Any = await completer(argument, value)
        else:
            found = await anyio.to_thread.run_sync(completer, argument, value)
        values = [str(item) for item in found]
    except Exception as exc:
        message = errors.clip(str(exc) or type(exc).__name__, errors.QUOTE_CHARS)
        raise MCPError(code=types.INTERNAL_ERROR, message=texts.completion_failed(argument, message)) from exc
    completion = types.Completion(values=values[:MAX_VALUES], total=len(values), has_more=len(values) > MAX_VALUES)
    return types.CompleteResult(completion=completion)
