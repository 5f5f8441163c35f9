"""`toolwire dev FILE`: the loop of writing tools. Serves FILE's registry over HTTP in a child process (`toolwire serve
FILE --http`), starts it again when a .py file in FILE's folder changes, and opens the MCP Inspector on it when one is
installed. The watch is a poll of the files' modification times (twice a second): no dependency, and the folder is
one a person edits by hand."""

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import click

from toolwire_server.cli import TARGET_HELP

INSPECTOR = "mcp-inspector"
GET_INSPECTOR = (
    "npm install @modelcontextprotocol/inspector (Node 22) and set TOOLWIRE_NODE_DIR to its folder, or run "
    "`npx @modelcontextprotocol/inspector --server-url {url}`"
)


@click.command()
@click.argument("target", metavar=TARGET_HELP)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="HTTP port.")
@click.option(
    "--inspector/--no-inspector",
    default=True,
    show_default=True,
    help="Start the MCP Inspector on the server (from $TOOLWIRE_NODE_DIR, ./node_modules or PATH).",
)
@click.option(
    "--poll", "poll_s", default=0.5, hidden=True, type=click.FloatRange(min=0.05), help="Seconds between looks."
)
def dev(target: str, host: str, port: int, inspector: bool, poll_s: float) -> None:
    """Serve FILE's tools over HTTP, restart when a .py file beside it changes, and open the MCP Inspector.

    FILE is what `toolwire serve` takes (tools.py, MODULE or MODULE:ATTR). A change that breaks the file shows the
    server's one-line error; the next change starts it again. Ctrl-C stops the server and the Inspector.
    """
    from toolwire_server.transports.http import PortInUse, check_bindable

    try:
        check_bindable(host, port)
    except PortInUse as exc:
        raise click.ClickException(f"{exc} (--port PORT serves on another)") from exc
    folder = _folder_of(target)
    url = f"http://{host}:{port}/mcp"
    argv = [sys.executable, "-m", "toolwire_server", target, "--http", "--host", host, "--port", str(port)]
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    click.echo(f"toolwire dev: serving {target} at {url}; restarts when a .py file in {folder} changes", err=True)
    with _child(argv) as server, _inspector(url, inspector), suppress(KeyboardInterrupt):  # Ctrl-C: stop both
        _watch(folder, argv, server, poll_s)


def _folder_of(target: str) -> Path:
    """The folder whose .py files are watched: the file's, or the module's, as `serve` would import it."""
    module = target.partition(":")[0]
    if module.endswith(".py"):
        path = Path(module)
        if not path.is_file():
            raise click.BadParameter(f"no such file: {module}", param_hint="FILE")
        return path.resolve().parent
    import importlib.util

    sys.path.insert(0, os.getcwd())
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    if spec is None or spec.origin is None:
        raise click.BadParameter(f"cannot find module {module!r} (give a path: tools.py)", param_hint="FILE")
    return Path(spec.origin).resolve().parent


def _watch(folder: Path, argv: list[str], server: list["subprocess.Popen[bytes]"], poll_s: float) -> None:
    """Until Ctrl-C: look at the folder's .py files every `poll_s`; on a change, start the server again."""
    seen = _mtimes(folder)
    said_stopped = False
    while True:
        time.sleep(poll_s)  # a poll of the files, not a wait on another process
        now = _mtimes(folder)
        if now != seen:
            changed = sorted(p.name for p in set(now) ^ set(seen) | {p for p in now if now[p] != seen.get(p)})
            click.echo(f"toolwire dev: {', '.join(changed)} changed: restarting the server", err=True)
            seen = now
            _stop(server[0])
            server[0] = subprocess.Popen(argv)
            said_stopped = False
        elif server[0].poll() is not None and not said_stopped:
            click.echo(
                f"toolwire dev: the server stopped (exit {server[0].returncode}); waiting for a change", err=True
            )
            said_stopped = True


def _mtimes(folder: Path) -> dict[Path, int]:
    found: dict[Path, int] = {}
    for path in folder.glob("*.py"):
        with suppress(OSError):  # removed between the listing and the look
            found[path] = path.stat().st_mtime_ns
    return found


@contextmanager
def _child(argv: list[str]) -> Iterator[list["subprocess.Popen[bytes]"]]:
    """The server process, in a one-item list the watch replaces it in; stopped on the way out."""
    server = [subprocess.Popen(argv)]
    try:
        yield server
    finally:
        _stop(server[0])


@contextmanager
def _inspector(url: str, wanted: bool) -> Iterator[None]:
    """The Inspector's web client on `url`, or one line saying how to get it."""
    if not wanted:
        yield
        return
    command = _find_inspector()
    if command is None:
        click.echo(f"toolwire dev: no MCP Inspector found; {GET_INSPECTOR.format(url=url)}", err=True)
        yield
        return
    env = {**os.environ, "PATH": f"{command.parent}{os.pathsep}{os.environ.get('PATH', '')}"}  # its Node 22 first
    click.echo(f"toolwire dev: starting the MCP Inspector ({command}); it prints the URL to open", err=True)
    inspector = subprocess.Popen([str(command), "--server-url", url], env=env)
    try:
        yield
    finally:
        _stop(inspector)


def _find_inspector() -> Path | None:
    folders = [os.environ.get("TOOLWIRE_NODE_DIR", ""), os.getcwd()]
    for folder in filter(None, folders):
        candidate = Path(folder) / "node_modules" / ".bin" / INSPECTOR
        if candidate.is_file():
            return candidate
    found = shutil.which(INSPECTOR)
    return Path(found) if found else None


def _stop(proc: "subprocess.Popen[bytes]") -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)
