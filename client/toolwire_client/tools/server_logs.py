"""A tool server's log messages (MCP logging, `notifications/message`) are the server's to send and the run's server
log's to hold: a server that logs without end must not fill it (one call wrote 12.3 MB). Each server has a budget:
a line is cut at `MAX_LOG_LINE_CHARS`; `LOG_LINES_PER_S` lines a second (bursts of `LOG_BURST_LINES`) and
`LOG_BYTES_PER_S` bytes a second (bursts of `LOG_BURST_BYTES`) are written; what is over is dropped and counted, and
one line says how many before the next line written, or when the connection to the server closes."""

import time
from collections.abc import Callable

from toolwire_client.tools.server_stderr import NOTE

MAX_LOG_LINE_CHARS = 8_000
LOG_LINES_PER_S = 20
LOG_BURST_LINES = 200
LOG_BYTES_PER_S = 4_096
LOG_BURST_BYTES = 1_000_000


class _Bucket:
    """A token bucket: `burst` at most, refilled at `rate` a second."""

    def __init__(self, burst: int, rate: int, now: float) -> None:
        self.burst, self.rate, self.tokens, self.at = burst, rate, float(burst), now

    def refill(self, now: float) -> None:
        self.tokens, self.at = min(self.burst, self.tokens + (now - self.at) * self.rate), now


class LogBudget:
    """One server's budget for its log lines (not thread-safe: the lines arrive on the connection's loop)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        now = clock()
        self._lines = _Bucket(LOG_BURST_LINES, LOG_LINES_PER_S, now)
        self._bytes = _Bucket(LOG_BURST_BYTES, LOG_BYTES_PER_S, now)
        self.dropped = 0

    def admit(self, line: str) -> list[str]:
        """What to write for `line`: nothing (it is over the budget: counted), or the line, cut to its length, after
        the note of the lines dropped before it."""
        if len(line) > MAX_LOG_LINE_CHARS:
            line = line[:MAX_LOG_LINE_CHARS] + f" ... ({len(line) - MAX_LOG_LINE_CHARS} more characters not logged)"
        size = len(line.encode(errors="replace"))
        now = self._clock()
        self._lines.refill(now)
        self._bytes.refill(now)
        if self._lines.tokens < 1 or self._bytes.tokens < size:
            self.dropped += 1
            return []
        self._lines.tokens -= 1
        self._bytes.tokens -= size
        return [*self.closing(), line]

    def closing(self) -> list[str]:
        """The note of the lines dropped since the last one written (none if none were)."""
        if not self.dropped:
            return []
        note = (
            f"{NOTE}dropped {self.dropped} log lines of this server (over {LOG_LINES_PER_S} lines or "
            f"{LOG_BYTES_PER_S:,} bytes a second, bursts of {LOG_BURST_LINES} lines or {LOG_BURST_BYTES:,} bytes)"
        )
        self.dropped = 0
        return [note]
