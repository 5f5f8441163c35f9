"""Who holds a run: claim owners name their host and process, so a claim left by a killed process can be taken over."""

import os
import socket
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

LEASE_S = float(os.environ.get("TOOLWIRE_LEASE_S", "30"))
"""A claim whose heartbeat has not renewed it for this long is abandoned (its holder is gone, or on another machine
and cut off); a holder on this host whose process is gone loses it at once."""
CLAIM_LEASE = timedelta(seconds=LEASE_S)


def claim_owner() -> str:
    """A claim owner for this process: host, pid and a random part (one process may resume several runs)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def claim_is_orphaned(holder: str, claimed_at: Any) -> bool:
    """True when the holder's process is gone (same host) or its lease ran out (any host)."""
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if host == socket.gethostname() and pid_text.isdigit():
        return not _alive(int(pid_text))
    stamp = _as_datetime(claimed_at)
    return stamp is not None and datetime.now(UTC) - stamp > CLAIM_LEASE


def _alive(pid: int) -> bool:
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


def _as_datetime(value: Any) -> datetime | None:
    if value is None:
        return None
    stamp = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
