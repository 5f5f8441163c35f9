"""When a dropped MCP connection is made again: the restart policies a Supervisor is given.

- `OnceOnly` (a run's own server): at most `max_restarts` in the connection's life, at once.
- `SlidingWindow` (a connection many runs share): at most `max_restarts` in any `window_s`, so the connection
  recovers by itself once the window slides, spaced by an exponential backoff; each crash is blamed on the runs that
  had a call in flight when the connection dropped. A run in flight at `strikes` crashes in a row (none of its calls
  answered between them) is refused further calls on the connection: it gets the error, the others go on. A run that
  was only unlucky once (in flight beside the culprit) has its count cleared by its next answered call.
- `Backoff` (a gateway's upstream): for ever, the wait doubling from `first_s` to `max_s`, and starting again from
  `first_s` after a connection that stayed up `steady_s` (a crash loop keeps doubling it)."""

from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass, field

REMEMBERED = 1024
"""Runs whose strikes or refusal a connection keeps at most (a long-lived worker sees runs without end)."""


@dataclass(frozen=True)
class Restart:
    wait_s: float
    paused: str | None = None
    """Why calls fail at once while it waits (a full window); None: they wait for the new connection."""


class RestartPolicy:
    """A policy: `next_restart` after each end of a connection. The run bookkeeping (`crashed`, `answered`,
    `refusal`) only a shared connection's policy keeps; the others' does nothing."""

    shared = False
    """Many runs share the connection: a read that meets a drop is asked again on the next connection, where a run's
    own server that drops before it listed its tools has failed its start."""

    def next_restart(self, label: str, restarts: int, now: float, up_since: float) -> Restart | str:
        """How long to wait before the next connection; a str: why there is none."""
        raise NotImplementedError

    def restarted(self, now: float) -> None:
        """The wait is over and the connection is made again."""

    def crashed(self, in_flight: Iterable[str]) -> list[str]:
        """Blame a crash on the runs with a call in flight at it; the runs refused from now on."""
        return []

    def answered(self, run_id: str) -> None:
        """A call of the run came back: the server lived through it."""

    def refusal(self, run_id: str | None, server: str) -> str | None:
        """Why the run gets no more calls on this connection, or None."""
        return None


@dataclass
class OnceOnly(RestartPolicy):
    max_restarts: int = 1

    def next_restart(self, label: str, restarts: int, now: float, up_since: float) -> Restart | str:
        if restarts >= self.max_restarts:
            return f"the {label} stopped and was already restarted {restarts} time(s)"
        return Restart(0.0)


@dataclass
class Backoff(RestartPolicy):
    first_s: float = 0.5
    max_s: float = 30.0
    steady_s: float = 60.0
    _next_s: float | None = None

    def next_restart(self, label: str, restarts: int, now: float, up_since: float) -> Restart | str:
        wait = self.first_s if self._next_s is None or now - up_since > self.steady_s else self._next_s
        self._next_s = min(wait * 2, self.max_s)
        return Restart(wait)


@dataclass
class SlidingWindow(RestartPolicy):
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

    shared = True

    def delay(self, now: float) -> tuple[float, bool]:
        """Seconds to wait before the next restart, and whether that is because the window is full."""
        while self._times and now - self._times[0] >= self.window_s:
            self._times.popleft()
        if len(self._times) >= self.max_restarts:
            return self._times[0] + self.window_s - now, True
        if not self._times:
            return 0.0, False
        return min(self.backoff_s * 2 ** (len(self._times) - 1), self.max_backoff_s), False

    def next_restart(self, label: str, restarts: int, now: float, up_since: float) -> Restart | str:
        wait, full = self.delay(now)
        if not full:
            return Restart(wait)
        return Restart(
            wait,
            f"the {label} stopped {self.in_window()} times in the last {self.window_s:g} s; it is started again "
            f"in {wait:.0f} s",
        )

    def restarted(self, now: float) -> None:
        self._times.append(now)

    def in_window(self) -> int:
        return len(self._times)

    def crashed(self, in_flight: Iterable[str]) -> list[str]:
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
        if run_id is None or run_id not in self._refused:
            return None
        return (
            f"the tool server '{server}' stopped {self._refused[run_id]} times in a row while this run had a call in "
            "flight, so this run gets no more restarts of it (the other runs that share it go on)"
        )


def _forget_oldest(seen: dict[str, int]) -> None:
    while len(seen) > REMEMBERED:
        del seen[next(iter(seen))]
