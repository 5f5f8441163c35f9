"""A fleet split across network namespaces this module makes itself, so a test can cut one worker off from
PostgreSQL and heal the link again (issue 38). PostgreSQL runs in namespace `pg`, each worker in one of its own
(`w1`, `w2`, ...), joined to `pg` by a veth pair of its own, 10.213.N.0/30 (PostgreSQL at .1, the worker at .2); the
addresses exist only inside these namespaces. The test itself reaches PostgreSQL over its Unix socket (a file: no
namespace needed), never over the network. Every process, namespace and directory is gone after `close()`, which
the fixture always calls.

Two cuts: `cut(n, silent=True)` takes PostgreSQL's end of worker n's link down (its packets vanish: a partition that
answers nothing), `cut(n, silent=False)` makes the address unreachable in the worker's namespace (every send fails at
once). `heal(n)` undoes either."""

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from helpers.postgres import _as_server_user, _pg_bin

PREFIX = "tw38-"
PORT = 5432
"""PostgreSQL's port inside its namespace (a network stack of its own: nothing else listens there)."""


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)} failed: {done.stderr.strip()}")


def can_make_namespaces() -> str | None:
    """None when this process may make network namespaces, else why not (the cluster tests are skipped)."""
    if shutil.which("ip") is None:
        return "no `ip` command (iproute2)"
    probe = f"tw38probe{uuid.uuid4().hex[:6]}"
    done = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        return f"`ip netns add` failed here ({done.stderr.strip() or done.returncode}): needs root and netns support"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, timeout=30)
    if not _pg_bin("initdb") or not _pg_bin("pg_ctl"):
        return "PostgreSQL is not installed (no initdb/pg_ctl)"
    return None


@dataclass
class Cluster:
    root: Path
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:6])
    links: list[int] = field(default_factory=list)
    joins: list[tuple[int, int]] = field(default_factory=list)
    made: list[str] = field(default_factory=list)
    postgres_started: bool = False
    processes: list["subprocess.Popen[bytes]"] = field(default_factory=list)

    # -- names ---------------------------------------------------------------------------------------------------
    def ns(self, name: str) -> str:
        """Named by the test process too: a cluster whose test process was killed is swept by the next one."""
        return f"{PREFIX}{os.getpid()}-{self.tag}-{name}"

    def pg_end(self, n: int) -> str:
        return f"tw{self.tag}p{n}"  # an interface name: 15 characters at most

    @staticmethod
    def pg_address(n: int) -> str:
        return f"10.213.{n}.1"

    def worker_url(self, n: int) -> str:
        """The run store as worker n reaches it: over its own link."""
        return f"postgresql://postgres@{self.pg_address(n)}:{PORT}/postgres"

    @property
    def url(self) -> str:
        """The run store as the test reaches it: PostgreSQL's Unix socket."""
        return f"postgresql://postgres@/postgres?host={self.root / 'sock'}&port={PORT}"

    def in_worker(self, n: int) -> tuple[str, ...]:
        """The prefix that runs a command in worker n's namespace."""
        return ("ip", "netns", "exec", self.ns(f"w{n}"))

    # -- the cluster ---------------------------------------------------------------------------------------------
    def make(self, workers: int) -> None:
        self._namespace("pg")
        for n in range(1, workers + 1):
            self._namespace(f"w{n}")
            worker_end = f"tw{self.tag}w{n}"
            _ip("link", "add", self.pg_end(n), "netns", self.ns("pg"), "type", "veth", "peer", worker_end)
            _ip("link", "set", worker_end, "netns", self.ns(f"w{n}"))
            _ip("-n", self.ns("pg"), "addr", "add", f"{self.pg_address(n)}/30", "dev", self.pg_end(n))
            _ip("-n", self.ns(f"w{n}"), "addr", "add", f"10.213.{n}.2/30", "dev", worker_end)
            _ip("-n", self.ns("pg"), "link", "set", self.pg_end(n), "up")
            _ip("-n", self.ns(f"w{n}"), "link", "set", worker_end, "up")
            self.links.append(n)
        self._start_postgres()

    def join(self, a: int, b: int) -> str:
        """A link of its own between worker namespaces `a` and `b` (a worker and a tool-server replica), 10.213.(100
        + its number).0/30; returns b's address on it, as a reaches it."""
        self.joins.append((a, b))
        subnet = 100 + len(self.joins)
        end_a, end_b = self._join_end(a, b, "a"), self._join_end(a, b, "b")
        _ip("link", "add", end_a, "netns", self.ns(f"w{a}"), "type", "veth", "peer", end_b)
        _ip("link", "set", end_b, "netns", self.ns(f"w{b}"))
        _ip("-n", self.ns(f"w{a}"), "addr", "add", f"10.213.{subnet}.1/30", "dev", end_a)
        _ip("-n", self.ns(f"w{b}"), "addr", "add", f"10.213.{subnet}.2/30", "dev", end_b)
        _ip("-n", self.ns(f"w{a}"), "link", "set", end_a, "up")
        _ip("-n", self.ns(f"w{b}"), "link", "set", end_b, "up")
        return f"10.213.{subnet}.2"

    def _join_end(self, a: int, b: int, end: str) -> str:
        return f"tw{self.tag}j{a}{b}{end}"

    def _namespace(self, name: str) -> None:
        _ip("netns", "add", self.ns(name))
        self.made.append(self.ns(name))
        _ip("-n", self.ns(name), "link", "set", "lo", "up")

    def _start_postgres(self) -> None:
        initdb = _pg_bin("initdb")
        assert initdb
        data, sock = self.root / "data", self.root / "sock"
        sock.mkdir()
        for path in (self.root, sock):
            shutil.chown(path, "postgres")
        _run(_as_server_user([initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]))
        with (data / "pg_hba.conf").open("a") as hba:
            hba.write("host all all 10.213.0.0/16 trust\n")
        self._pg_ctl_start()
        self.postgres_started = True

    def _pg_ctl_start(self) -> None:
        pg_ctl = _pg_bin("pg_ctl")
        assert pg_ctl
        listen = ",".join(self.pg_address(n) for n in self.links)
        sock = self.root / "sock"
        options = f"-c listen_addresses={listen} -p {PORT} -k {sock} -c fsync=off -c max_connections=200"
        data, log = str(self.root / "data"), str(self.root / "server.log")
        argv = [pg_ctl, "-D", data, "-o", options, "-l", log, "-w", "-t", "60", "start"]
        _run(["ip", "netns", "exec", self.ns("pg"), *_as_server_user(argv)])

    def restart_postgres(self) -> None:
        """Stopped at once (-m immediate: its clients' connections are cut) and started again."""
        pg_ctl = _pg_bin("pg_ctl")
        assert pg_ctl
        _run(_as_server_user([pg_ctl, "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop"]))
        self._pg_ctl_start()

    def start(self, n: int, argv: list[str], log: Path, env: dict[str, str] | None = None) -> "subprocess.Popen[bytes]":
        """A process in namespace `w{n}` (its output in `log`), stopped by `close()` if the test has not."""
        with log.open("ab") as out:
            proc = subprocess.Popen(
                [*self.in_worker(n), *argv], stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
            )
        self.processes.append(proc)
        return proc

    def bridge(self, n: int, port: int) -> Path:
        """A Unix socket (returned) that reaches 127.0.0.1:`port` in namespace `w{n}` (uds_bridge.py)."""
        socket = self.root / f"bridge-{n}-{port}.sock"
        bridge = Path(__file__).with_name("uds_bridge.py")
        self.start(n, [sys.executable, str(bridge), str(socket), str(port)], self.root / f"bridge-{n}.log")
        return socket

    # -- partitions ----------------------------------------------------------------------------------------------
    def cut(self, n: int, silent: bool = True) -> None:
        if silent:
            _ip("-n", self.ns("pg"), "link", "set", self.pg_end(n), "down")
        else:
            _ip("-n", self.ns(f"w{n}"), "route", "add", "unreachable", f"{self.pg_address(n)}/32")

    def heal(self, n: int) -> None:
        _ip("-n", self.ns("pg"), "link", "set", self.pg_end(n), "up")
        subprocess.run(
            ["ip", "-n", self.ns(f"w{n}"), "route", "del", "unreachable", f"{self.pg_address(n)}/32"],
            capture_output=True,
            timeout=30,
        )

    def cut_join(self, a: int, b: int, silent: bool = True) -> None:
        """The link `join(a, b)` made, cut: b's end down (silent), or b unreachable from a (fast), and then every
        TCP connection a holds to b aborted (`ss -K`: a connection cut mid-call fails at once, as a reset does)."""
        address = f"10.213.{101 + self.joins.index((a, b))}.2"
        if silent:
            _ip("-n", self.ns(f"w{b}"), "link", "set", self._join_end(a, b, "b"), "down")
        else:
            _ip("-n", self.ns(f"w{a}"), "route", "add", "unreachable", f"{address}/32")
            self.reset_join(a, b)

    def reset_join(self, a: int, b: int) -> None:
        """Every TCP connection namespace a holds to b on their link aborted, the link itself left up."""
        address = f"10.213.{101 + self.joins.index((a, b))}.2"
        _run(["ip", "netns", "exec", self.ns(f"w{a}"), "ss", "-K", "dst", address])

    def heal_join(self, a: int, b: int) -> None:
        address = f"10.213.{101 + self.joins.index((a, b))}.2"
        _ip("-n", self.ns(f"w{b}"), "link", "set", self._join_end(a, b, "b"), "up")
        subprocess.run(
            ["ip", "-n", self.ns(f"w{a}"), "route", "del", "unreachable", f"{address}/32"],
            capture_output=True,
            timeout=30,
        )

    def close(self) -> None:
        """Everything this cluster made, whatever state it is in."""
        for proc in self.processes:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
        if self.postgres_started:
            pg_ctl = _pg_bin("pg_ctl") or "pg_ctl"
            subprocess.run(
                _as_server_user([pg_ctl, "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop"]),
                capture_output=True,
                timeout=60,
            )
        for name in reversed(self.made):  # a namespace's veth ends go with it
            subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=30)
        shutil.rmtree(self.root, ignore_errors=True)


def _run(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")


def sweep_stale() -> None:
    """The namespaces (and every process in them: its PostgreSQL, its workers) of clusters whose test process is
    gone, killed before its teardown ran."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=30).stdout.split()
    for name in (n for n in listed if n.startswith(PREFIX)):
        pid = name.removeprefix(PREFIX).partition("-")[0]
        if pid.isdigit() and Path(f"/proc/{pid}").exists():
            continue
        inside = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True, timeout=30).stdout
        for process in inside.split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(process), signal.SIGKILL)
        subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=30)


def open_cluster(workers: int) -> Cluster:
    """A cluster of PostgreSQL and `workers` worker namespaces (skipped, saying why, where none can be made)."""
    why = can_make_namespaces()
    if why is not None:
        pytest.skip(f"cluster tests need network namespaces: {why}")
    sweep_stale()
    cluster = Cluster(Path(tempfile.mkdtemp(prefix="toolwire-cluster-")))
    os.chmod(cluster.root, 0o755)
    try:
        cluster.make(workers)
    except BaseException:
        cluster.close()
        raise
    return cluster
