"""Where the tool servers' own output (their stderr) goes while `toolwire run`, `resume` or `demo` shows its step
table: into one log file per run, named at the end, so it never lands between the table's lines; with -v, inline on
stderr, dimmed and prefixed with the server's name."""

import os
import threading
from pathlib import Path
from typing import TextIO

import platformdirs
from rich.console import Console

from toolwire_client.tools.server_stderr import NOTE
from toolwire_shared.terminal import shown

LOG_DIR_ENV = "TOOLWIRE_LOG_DIR"


def log_dir() -> Path:
    """$TOOLWIRE_LOG_DIR, else toolwire's folder in the user log dir."""
    return Path(os.environ.get(LOG_DIR_ENV) or platformdirs.user_log_dir("toolwire"))


class ServerOutput:
    """The sink for every stdio tool server of one run (lines arrive from reader threads)."""

    def __init__(self, run_id: str, *, verbose: bool = False):
        self.path = log_dir() / f"{run_id}.log"
        self.verbose = verbose
        self._console = Console(stderr=True, soft_wrap=True)
        self._file: TextIO | None = None
        self._server_wrote = False
        self._lock = threading.Lock()

    def line(self, server: str, text: str) -> None:
        with self._lock:
            self._server_wrote = self._server_wrote or not text.startswith(NOTE)
            if self.verbose:
                self._console.print(shown(f"{server} | {text}"), style="dim", markup=False, highlight=False)
                return
            if self._file is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file = self.path.open("a", encoding="utf-8")
            self._file.write(f"{server} | {text}\n")
            self._file.flush()

    def close(self) -> Path | None:
        """Close the log; the path when a server wrote to it (not only toolwire's notes of how it started them)."""
        with self._lock:
            if self._file is None:
                return None
            self._file.close()
            self._file = None
            return self.path if self._server_wrote else None
