"""The one bounded wait of the tests: poll a real condition that another process makes true (a file a tool writes, a
port that answers, spans that arrive), because there is no event to wait on, and fail readably when it never holds.

`wait_until(check, what)` for sync code, `await await_until(check, what)` for async code (a sync or async check).
Both return the check's first truthy value and raise WaitFailed after `timeout_s`, or as soon as `proc` (the process
that should make the condition true) has ended; the message names what was waited for and ends with the process's
output: the tail of `log` if given, else what it wrote to its pipes.

Not for synchronising with this process's own tasks: wait on their event instead.
"""

import inspect
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypedDict, TypeVar, Unpack

import anyio

T = TypeVar("T")
INTERVAL_S = 0.02
LOG_TAIL_CHARS = 3000


class WaitFailed(AssertionError):
    """The condition did not hold within its deadline, or the process it waited on ended first."""


def process_output(proc: "subprocess.Popen[Any]", log: Path | None = None) -> str:
    """The end of what a process said: its log file, or what it wrote to stdout/stderr pipes (once it has ended)."""
    if log is not None:
        return log.read_text(errors="replace")[-LOG_TAIL_CHARS:]
    try:
        out, err = proc.communicate(timeout=5)
    except (ValueError, subprocess.TimeoutExpired):  # pipes already read, or it still runs
        return ""
    parts = [p.decode(errors="replace") if isinstance(p, bytes) else p for p in (out, err) if p]
    return "\n".join(parts)[-LOG_TAIL_CHARS:]


class Bounds(TypedDict, total=False):
    """The options both waits take."""

    timeout_s: float
    """How long to try (default 60 s)."""
    interval_s: float
    """The pause between tries (default 20 ms)."""
    proc: "subprocess.Popen[Any] | None"
    """The process that should make the condition true: its end fails the wait at once."""
    log: Path | None
    """Its log file, quoted when the wait fails."""
    detail: Callable[[], str] | None
    """What was seen instead, said when the time is up."""


class _Deadline:
    def __init__(
        self,
        what: str,
        timeout_s: float = 60.0,
        interval_s: float = INTERVAL_S,
        proc: "subprocess.Popen[Any] | None" = None,
        log: Path | None = None,
        detail: Callable[[], str] | None = None,
    ) -> None:
        self.what, self.timeout_s, self.interval_s = what, timeout_s, interval_s
        self.proc, self.log, self.detail = proc, log, detail
        self.end = time.monotonic() + timeout_s

    def next_pause(self) -> float:
        """How long to pause before the next try; raises if the process ended or the time is up."""
        if self.proc is not None and self.proc.poll() is not None:
            output = process_output(self.proc, self.log)
            raise WaitFailed(f"the process ended with {self.proc.returncode} before {self.what}:\n{output}")
        left = self.end - time.monotonic()
        if left <= 0:
            said = f"; {self.detail()}" if self.detail else ""
            output = f"; its output so far:\n{process_output(self.proc, self.log)}" if self.log else ""
            raise WaitFailed(f"gave up waiting for {self.what} after {self.timeout_s:g} s{said}{output}")
        return min(self.interval_s, left)


def wait_until(
    check: Callable[[], T], what: str, *, pause: Callable[[float], object] = time.sleep, **bounds: Unpack[Bounds]
) -> T:
    """Call `check` until it returns something truthy and return that. `pause(seconds)` runs between tries: a
    sleep by default, or e.g. a threading.Condition's wait, to be woken as soon as the condition may have changed."""
    deadline = _Deadline(what, **bounds)
    while not (value := check()):
        pause(deadline.next_pause())
    return value


async def await_until(check: Callable[[], T | Awaitable[T]], what: str, **bounds: Unpack[Bounds]) -> T:
    """wait_until for async code: `check` may be a coroutine function, and the pause is anyio.sleep."""
    deadline = _Deadline(what, **bounds)
    while True:
        value = check()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value  # type: ignore[return-value]
        await anyio.sleep(deadline.next_pause())  # the condition is another process's: nothing to await instead
