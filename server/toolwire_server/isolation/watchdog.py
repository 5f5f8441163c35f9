"""Notice a stalled event loop and name the tool that stalled it: a task that wakes every `TICK_S` measures how late
it woke, and every step of an async tool running on the loop is timed, so a stall over `STALL_S` is logged with the
tool whose step (code that never awaited) held the loop; one that no tool caused only when it is long (HELD_S).
Cheap: one wake-up per tick, two clock reads per step."""

import logging
import time
from collections.abc import Awaitable, Coroutine, Generator
from typing import Any, TypeVar

import anyio

log = logging.getLogger("toolwire.server")

STALL_S = 0.1
HELD_S = 1.0
"""A stall no tool step caused is said only past this: an idle server on a busy machine wakes 100 ms late now and
then, and that says nothing a user can act on."""
TICK_S = 0.05
T = TypeVar("T")

_slowest: list[Any] = [None, 0.0]
"""[tool name, seconds] of the longest tool step since the watchdog last looked."""
_watching = [0]
"""How many watchdogs run in this process: with none (an in-process RegistrySource's client) no step is timed."""


class _Timed:
    """Awaits a tool's coroutine, timing each step it takes on the loop (from one await to the next)."""

    __slots__ = ("_coro", "_name")

    def __init__(self, name: str, coro: Coroutine[Any, Any, Any]) -> None:
        self._name, self._coro = name, coro

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, clock = self._coro, time.perf_counter
        value: Any = None
        error: BaseException | None = None
        while True:
            start = clock()
            try:
                yielded = coro.send(value) if error is None else coro.throw(error)
            except StopIteration as stop:
                _note(self._name, clock() - start)
                return stop.value
            except BaseException:
                _note(self._name, clock() - start)
                raise
            _note(self._name, clock() - start)
            try:
                value, error = (yield yielded), None
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # cancellation and the like go on into the tool
                value, error = None, exc


def _note(name: str, seconds: float) -> None:
    if seconds > _slowest[1]:
        _slowest[0], _slowest[1] = name, seconds


def on_loop(name: str, coro: Coroutine[Any, Any, T]) -> Awaitable[T]:
    """`coro` to await, its steps timed while a watchdog runs in this process (nobody reads the times else)."""
    return _Timed(name, coro) if _watching[0] else coro


async def watch(stall_s: float = STALL_S, tick_s: float = TICK_S) -> None:
    """Run until cancelled; log each stall over `stall_s` with the tool whose step held the loop (if one did)."""
    _watching[0] += 1
    try:
        await _watched(stall_s, tick_s)
    finally:
        _watching[0] -= 1


async def _watched(stall_s: float, tick_s: float) -> None:
    clock = time.perf_counter
    while True:
        _slowest[0], _slowest[1] = None, 0.0
        start = clock()
        await anyio.sleep(tick_s)
        late = clock() - start - tick_s
        if late > stall_s:
            tool, held = _slowest
            if tool is not None and held >= late / 2:
                log.warning(
                    "event loop stalled for %.0f ms: tool %s ran %.0f ms without awaiting (CPU-bound work on the "
                    "loop; give the tool isolation='process' or make it await)",
                    late * 1000,
                    tool,
                    held * 1000,
                )
            elif late > HELD_S:
                log.warning(
                    "event loop stalled for %.0f ms with no tool step holding it (the process was paused, or the "
                    "machine is too busy to run it)",
                    late * 1000,
                )
