"""One pinned venv per peer framework, built once under a cache dir and reused while its pin file is unchanged.

The peers (Pydantic AI, the OpenAI Agents SDK) must not be installed in toolwire's own .venv: each runs its scripted
bench in a venv of its own, `<cache>/<peer>-<hash of the pin file and the Python version>`. A venv is built in a
temporary folder and renamed into place only when pip succeeded, so a half-built one is never reused.
"""

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PEERS = ("pydantic_ai", "agents_sdk")
INSTALL_TIMEOUT_S = 900


class PeerUnavailable(Exception):
    """The peer's venv could not be built (no network, a pin that does not resolve): the bench skips that peer."""


def cache_dir() -> Path:
    if override := os.environ.get("TOOLWIRE_BENCH_VENVS"):
        return Path(override)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "toolwire" / "bench-venvs"


def pins(peer: str) -> Path:
    return HERE / f"{peer}.txt"


def venv_path(peer: str) -> Path:
    digest = hashlib.sha256(pins(peer).read_bytes() + platform.python_version().encode()).hexdigest()[:12]
    return cache_dir() / f"{peer}-{digest}"


def python_of(venv: Path) -> Path:
    return venv / "bin" / "python"


def existing(peer: str) -> Path | None:
    """The peer venv's python if it is already built for the current pins, else None (never builds)."""
    python = python_of(venv_path(peer))
    return python if python.exists() else None


def ensure(peer: str) -> Path:
    """The peer venv's python, building the venv first if the pins changed or it was never built."""
    if found := existing(peer):
        return found
    final = venv_path(peer)
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{peer}-", dir=final.parent))
    try:
        _run([sys.executable, "-m", "venv", str(staging)], "python -m venv")
        pip = [str(python_of(staging)), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--retries", "2"]
        _run([*pip, "-r", str(pins(peer))], f"pip install -r bench/peers/{pins(peer).name}")
        staging.rename(final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    for old in final.parent.glob(f"{peer}-*"):  # venvs of earlier pins
        if old != final:
            shutil.rmtree(old, ignore_errors=True)
    return python_of(final)


def _run(argv: list[str], what: str) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as exc:
        raise PeerUnavailable(f"{what} took more than {INSTALL_TIMEOUT_S} s") from exc
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")] or done.stderr.splitlines()
        raise PeerUnavailable(f"{what} failed: {errors[-1] if errors else f'exit {done.returncode}'}")


if __name__ == "__main__":  # `python -m bench.peers.venvs`: build (or find) every peer's venv
    for name in PEERS:
        try:
            print(f"{name}: {ensure(name)}")
        except PeerUnavailable as exc:
            print(f"{name}: skipped: {exc}", file=sys.stderr)
