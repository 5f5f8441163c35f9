"""Whether a process of this pid space is still running: the one answer the run store's claims and the tool server's
task store both ask of a holder that names its pid."""

import os


def process_alive(pid: int) -> bool:
    """True while `pid` runs, or when this process may not signal it (it exists, under another user); False once it
    has exited, a zombie that was not yet reaped included (it does no more work)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] == "Z"
    except OSError:
        return False
