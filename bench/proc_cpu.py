"""CPU seconds of processes from /proc (Linux), without psutil: what the fleet bench divides by loop steps.

A process's own time is utime + stime; the time of children it has waited for (exited PostgreSQL backends, reaped
by the postmaster) is cutime + cstime. So a process tree's CPU over an interval is the difference of
`tree_cpu_s` taken at both ends, as long as its root lives throughout.
"""

import os
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def _fields(pid: int) -> list[str]:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2 :].split()  # after "pid (comm) "; comm may hold spaces


def cpu_s(pid: int, children: bool = False) -> float:
    """utime + stime of `pid` (plus cutime + cstime, its reaped children, with `children`), in seconds."""
    f = _fields(pid)
    ticks = int(f[11]) + int(f[12])  # utime, stime: fields 14 and 15 of proc(5)
    if children:
        ticks += int(f[13]) + int(f[14])
    return ticks / TICK


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int(_fields(int(entry.name))[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue  # exited while we looked
    return found


def tree_cpu_s(pid: int) -> float:
    """`pid` and its reaped children, plus its live children (one level: PostgreSQL's backends, uvicorn's workers)."""
    total = cpu_s(pid, children=True)
    for child in _children(pid):
        try:
            total += cpu_s(child)
        except OSError:
            continue
    return total


def machine_busy_s() -> float:
    """CPU seconds the whole machine has spent not idle since boot (every process, ours and anyone else's)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / TICK  # user nice system idle iowait irq softirq steal
