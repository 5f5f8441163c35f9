"""A real PostgreSQL server for tests: initdb into a temporary directory, listen on 127.0.0.1 on a free port,
yield a URL, stop it at the end. Runs the server as the `postgres` user when the tests run as root."""

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _as_server_user(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    runuser = shutil.which("runuser")
    if runuser:
        return [runuser, "-u", "postgres", "--", *argv]
    return ["su", "postgres", "-c", " ".join(argv)]


def _run(argv: list[str]) -> None:
    done = subprocess.run(_as_server_user(argv), capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")


def start_postgres(root: Path, max_connections: int = 100) -> str:
    """Start a fresh server with its data under `root` (made readable by the server user); its base URL.
    `max_connections`: the fleet bench's workers hold one connection per run they drive."""
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    assert initdb and pg_ctl, "PostgreSQL is not installed"
    data, sockets = root / "data", root / "sock"
    sockets.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(sockets, "postgres")
    _run([initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"])
    port = _free_port()
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {sockets} -c fsync=off -c max_connections={max_connections}"
    _run([pg_ctl, "-D", str(data), "-o", options, "-l", str(root / "server.log"), "-w", "-t", "60", "start"])
    return f"postgresql://postgres@127.0.0.1:{port}/postgres"


def stop_postgres(root: Path) -> None:
    _run([_pg_bin("pg_ctl") or "pg_ctl", "-D", str(root / "data"), "-m", "immediate", "-w", "stop"])


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """Base URL of a fresh server (database `postgres`); tests make their own databases with `fresh_database`."""
    if not _pg_bin("initdb") or not _pg_bin("pg_ctl"):
        pytest.skip("PostgreSQL is not installed (no initdb/pg_ctl on PATH or under /usr/lib/postgresql/*/bin)")
    # Not under pytest's basetemp: other pytest sessions reset its parent to 0700, locking the server user out.
    root = Path(tempfile.mkdtemp(prefix="toolwire-pg-"))
    try:
        yield start_postgres(root)
    finally:
        stop_postgres(root)
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(base_url: str, name: str) -> str:
    """Create an empty database on the test server and return its URL."""
    import psycopg

    with psycopg.connect(base_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return base_url.rsplit("/", 1)[0] + "/" + name


def end_sessions(url: str, application: str | None = None) -> int:
    """End the database's other sessions (of one `application_name` if given), as a lost link, a database restart or
    a pooler's recycling does: how many were ended."""
    import psycopg

    which = "" if application is None else " AND application_name = %s"
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()" + which,
            () if application is None else (application,),
        ).fetchall()
    return len(rows)
