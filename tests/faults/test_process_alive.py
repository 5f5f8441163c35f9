"""A holder named by its pid is judged by process_alive, for the run store's claims and the tool server's task
owners alike: a process that runs is alive, one that exited is not, an exited one not yet reaped (a zombie) neither."""

import os
import signal
import subprocess
import sys
from pathlib import Path

from helpers.polling import wait_until
from toolwire_shared.processes import process_alive


def _state(pid: int) -> str:
    """The process's state letter in /proc (R, S, Z, ...)."""
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]


def test_a_running_process_is_alive_and_an_exited_one_is_not_even_before_it_is_reaped() -> None:
    assert process_alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert process_alive(child.pid)
        os.kill(child.pid, signal.SIGKILL)
        wait_until(lambda: _state(child.pid) == "Z", "the killed child to be a zombie (exited, not reaped)")
        assert not process_alive(child.pid)  # the task store judged a zombie owner alive until its lease ran out
    finally:
        child.kill()
        child.wait()
    assert not process_alive(child.pid)
