"""When a shared connection's tool server may be started again, and which run gets no more of it.

A connection many runs share must not be lost to all of them because one run's calls keep killing its server:
restarts are counted in a sliding window (at most `max_restarts` in any `window_s`, so the connection recovers by
itself once the window slides), spaced by an exponential backoff, and each crash is blamed on the runs that had a
call in flight when the connection dropped. A run in flight at `strikes` crashes in a row (none of its calls answered
between them) is refused further calls on the connection: it gets the error, the others go on. A run that was only
unlucky once (in flight beside the culprit) has its count cleared by its next answered call."""

from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass, field

REMEMBERED = 1024
"""Runs whose strikes or refusal a connection keeps at most (a long-lived worker sees runs without end)."""


@dataclass
class RestartWindow:
    max_restarts: int = 10
    """Restarts in any `window_s`; past it the connection waits for the window to slide (calls fail meanwhile)."""
    window_s: float = 60.0
    backoff_s: float = 0.1
    """Wait before a restart: `backoff_s` doubled for each restart already in the window, at most `max_backoff_s`."""
    max_backoff_s: float = 5.0
    strikes: int = 3
    """Crashes in a row a run may be in flight at before it gets no more calls on the connection."""
    _times: deque[float] = field(default_factory=deque)
    _strikes: Counter[str] = field(default_factory=Counter)
    _refused: dict[str, int] = field(default_factory=dict)

    def delay(self, now: float) -> tuple[float, bool]:
        """Seconds to wait before the next restart, and whether that is because the window is full."""
        while self._times and now - self._times[0] >= self.window_s:
            self._times.popleft()
        if len(self._times) >= self.max_restarts:
            return self._times[0] + self.window_s - now, True
        if not self._times:
            return 0.0, False
        return min(self.backoff_s * 2 ** (len(self._times) - 1), self.max_backoff_s), False

    def restarted(self, now: float) -> None:
        self._times.append(now)

    def in_window(self) -> int:
        return len(self._times)

    def crashed(self, in_flight: Iterable[str]) -> list[str]:
        """Blame a crash on the runs with a call in flight at it; the runs refused from now on."""
        refused = []
        for run_id in set(in_flight):
            self._strikes[run_id] += 1
            if self._strikes[run_id] >= self.strikes and run_id not in self._refused:
                self._refused[run_id] = self._strikes.pop(run_id)
                refused.append(run_id)
        _forget_oldest(self._strikes)
        _forget_oldest(self._refused)
        return refused

    def answered(self, run_id: str) -> None:
        """A call of the run came back: the server lived through it, so its earlier strikes were bad luck."""
        self._strikes.pop(run_id, None)

    def refusal(self, run_id: str | None, server: str) -> str | None:
        """Why the run gets no more calls on this connection, or None."""
        if run_id is None or run_id not in self._refused:
            return None
        return (
            f"the tool server '{server}' stopped {self._refused[run_id]} times in a row while this run had a call in "
            "flight, so this run gets no more restarts of it (the other runs that share it go on)"
        )


def _forget_oldest(seen: dict[str, int]) -> None:
    while len(seen) > REMEMBERED:
        del seen[next(iter(seen))]
