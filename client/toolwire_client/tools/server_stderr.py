"""A stdio tool server's stderr: every line goes to a sink (by default this process's stderr, as if inherited; the CLI
passes a log file or a dimmed, prefixed echo), and the lines of the latest start are kept, so a server that fails
at start-up can be quoted in the error instead of leaving its words somewhere above it."""

import os
import sys
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import TextIO

import anyio.to_thread

LineSink = Callable[[str, str], None]
"""Called with (server name, one line of its stderr without the newline), from a reader thread."""
NOTE = "toolwire: "
"""The start of a line toolwire itself writes to a server's log (what it was started with), not the server's."""

KEPT_LINES = 50
"""Lines of the latest start kept for an error message."""
SETTLE_S = 5.0
"""How long a failed start waits for the rest of its server's stderr (only a grandchild holding it open takes long)."""


def as_inherited(server: str, line: str) -> None:
    """The default sink: the line on this process's stderr, as if the server had inherited it."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


class ServerStderr:
    """One per stdio tool server; `pipe()` is the stderr of one start of it."""

    def __init__(self, server: str, sink: LineSink = as_inherited):
        self.server, self.sink = server, sink
        self._latest: deque[str] = deque(maxlen=KEPT_LINES)
        self._reader: threading.Thread | None = None

    @asynccontextmanager
    async def pipe(self) -> AsyncIterator[TextIO]:
        """The write end to give the spawned server. Close it as soon as the server holds its own copy (the
        context's exit does in any case), so the reader ends exactly when the server has closed its stderr."""
        read_fd, write_fd = os.pipe()
        lines: deque[str] = deque(maxlen=KEPT_LINES)
        self._latest = lines
        self._reader = threading.Thread(
            target=self._copy, args=(read_fd, lines), name=f"stderr of {self.server}", daemon=True
        )
        self._reader.start()
        errlog = os.fdopen(write_fd, "w")
        try:
            yield errlog
        finally:
            errlog.close()

    async def latest(self) -> list[str]:
        """The lines the latest start wrote, once it has closed its stderr (a failed start has: it has exited)."""
        reader = self._reader
        if reader is not None:
            await anyio.to_thread.run_sync(reader.join, SETTLE_S)
        return list(self._latest)

    def _copy(self, fd: int, lines: deque[str]) -> None:
        with os.fdopen(fd, "rb") as stream:
            for raw in stream:
                line = raw.decode(errors="replace").rstrip("\r\n")
                lines.append(line)
                with suppress(Exception):  # a broken sink must not stop the copy: the server would block
                    self.sink(self.server, line)


def error_line(lines: list[str]) -> str | None:
    """The line that says what went wrong: the last line of a Python traceback, else the first line that reads like
    an error, else the last line written."""
    said = [line.strip() for line in lines if line.strip()]
    if not said:
        return None
    if any(line.startswith("Traceback (most recent call last)") for line in said):
        return said[-1]
    for line in said:
        if any(word in line.lower() for word in ("error", "cannot", "no such", "not found", "fatal", "failed")):
            return line
    return said[-1]
