"""Who holds a run. A claim owner is unique to one lease taken (host and pid for people, a random part, and the pid
space it was taken in), and a claim is abandoned when the database's clock says its lease ran out (store/sql.py):
never judged by a hostname, which network namespaces and containers share with processes that are alive elsewhere.
Only a holder of this very pid space (same boot, same pid namespace) whose process has exited loses it at once."""

import hashlib
import os
import socket
import uuid

from toolwire_shared.processes import process_alive

LEASE_S = float(os.environ.get("TOOLWIRE_LEASE_S", "30"))
"""A claim whose heartbeat has not renewed it for this long (by the database's clock) is abandoned: its holder is
gone, or cut off, and stopped driving the run half this long after its last renewal (store/lease.py)."""


def _pid_space() -> str:
    """Where a pid names one process: this boot of this kernel and this pid namespace; '' where that is unknown."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as boot:
            boot_id = boot.read().strip()
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return ""
    return hashlib.sha256(f"{boot_id}/{namespace}".encode()).hexdigest()[:12]


PID_SPACE = _pid_space()


def claim_owner(pid: int | None = None) -> str:
    """A claim owner (the lease's fencing token): host, pid, a random part (one process may drive several runs, and
    takes a new lease each time) and its pid space."""
    return f"{socket.gethostname()}:{pid or os.getpid()}:{uuid.uuid4().hex[:8]}:{PID_SPACE}"


def holder_has_exited(holder: str) -> bool:
    """True only when the holder is a process of this pid space that has exited (a killed `toolwire run`): its run is
    taken over at once rather than after the lease runs out. An owner of another pid space, or of an older toolwire
    that did not name one, is judged by its lease alone."""
    parts = holder.split(":")
    if len(parts) != 4 or not PID_SPACE or parts[3] != PID_SPACE or not parts[1].isdigit():
        return False
    return not process_alive(int(parts[1]))
