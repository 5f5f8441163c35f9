"""Where the MCP servers nobody here wrote are, as `.ci/run` installs them (pinned): the npm ones in
$TOOLWIRE_NODE_DIR (default ./node22), run with its Node 22; the PyPI ones in ./.venv-mcp-servers, a venv of their
own. A test of a server that is not installed is skipped, saying how to install it; CI installs them all.

`toolwire(tmp_path, *args)` runs `toolwire ARGS` in its own process, as a user does, with one scripted model more
(driver.py: `--model scripted:calls`, the task a JSON list of calls); `EverythingHttp` is server-everything's
Streamable HTTP mode on a free 127.0.0.1 port."""

import json
import os
import shlex
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import clean_env, run_toolwire
from helpers.polling import WaitFailed, wait_until
from helpers.servers import REPO, free_port, stop_process
from toolwire_client.mistakes import WAITING

HERE = Path(__file__).parent
NODE_DIR = Path(os.environ.get("TOOLWIRE_NODE_DIR") or REPO / "node22")
NODE = NODE_DIR / "node_modules" / ".bin" / "node"
PY_SERVERS = REPO / ".venv-mcp-servers" / "bin"
INSTALL = "run .ci/run, or its install lines for node22/ and .venv-mcp-servers/"
EVERYTHING_LOG = r"\[(debug|info|notice|warning|error|critical|alert|emergency)\] \w+[- ]level"
"""One of the messages server-everything's simulated logging sends (at a random level), as the client writes it."""
ADA = {"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}
"""An entity for server-memory."""


def npm_server(package: str) -> list[str]:
    """The argv start of an npm server (`server-everything`, ...) run with node22's Node."""
    return [str(NODE), str(NODE_DIR / "node_modules" / "@modelcontextprotocol" / package / "dist" / "index.js")]


def py_server(name: str) -> list[str]:
    return [str(PY_SERVERS / name)]


def needs(argv: list[str]) -> pytest.MarkDecorator:
    """Skip unless every file of `argv` is installed."""
    missing = [part for part in argv if not Path(part).exists()]
    return pytest.mark.skipif(bool(missing), reason=f"not installed: {', '.join(missing)} ({INSTALL})")


def toolwire(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    """`toolwire ARGS` in its own process, its store and server logs in `tmp_path`: (exit status, stdout, stderr),
    never a traceback."""
    env = clean_env(TOOLWIRE_DB=str(tmp_path / "runs.db"), TOOLWIRE_LOG_DIR=str(tmp_path / "logs"))
    done = run_toolwire(*args, env=env, command=(sys.executable, str(HERE / "driver.py")), timeout_s=60)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout, done.stderr


def run_calls(
    tmp_path: Path, servers: list[list[str]], *calls: tuple[str, dict[str, Any]], flags: tuple[str, ...] = ()
) -> tuple[dict[str, Any], str]:
    """`toolwire run --server ... --json FLAGS` with a model that makes `calls` in turn: the final run state and
    what was shown on stderr (the step table; with -v the servers' output)."""
    task = json.dumps([[name, arguments] for name, arguments in calls])
    where = [arg for argv in servers for arg in ("--server", shlex.join(argv))]
    code, out, err = toolwire(tmp_path, "run", task, "--model", "scripted:calls", *where, "--json", *flags)
    state: dict[str, Any] = json.loads(out)
    assert code == (WAITING if state["status"] == "waiting_for_approval" else 0), err  # 4: waits for a person
    return state, err


def git_repo(path: Path) -> Path:
    """A fresh repository with one staged file and one untracked file."""
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "staged.txt").write_text("staged\n")
    (path / "loose.txt").write_text("loose\n")
    subprocess.run(["git", "-C", str(path), "add", "staged.txt"], check=True)
    return path


class EverythingHttp:
    """`server-everything streamableHttp` on a free port of 127.0.0.1 only (loopback_only.cjs), its output in
    `log`; ready once it accepts connections."""

    def __init__(self, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> "EverythingHttp":
        node, script = npm_server("server-everything")
        argv = [node, "--require", str(HERE / "loopback_only.cjs"), script, "streamableHttp"]
        env = {**clean_env(), "PORT": str(self.port)}
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            what = f"server-everything to listen on {self.url}"
            wait_until(self._accepts, what, timeout_s=20, proc=self.proc, log=self.log)
        except WaitFailed:
            self.__exit__()
            raise
        return self

    def _accepts(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
        except OSError:
            return False
        return True

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            stop_process(self.proc)
