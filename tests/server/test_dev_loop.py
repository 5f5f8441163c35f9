"""`toolwire dev tools.py`: serves the file's tools over HTTP, and after the file changes the new tool is listed (the
server was started again); with no MCP Inspector installed it says in one line how to get one; a stop stops the
server with it. Issue 37 item 3."""

import os
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from helpers.cli import TOOLWIRE, clean_env, run_toolwire
from helpers.polling import wait_until
from helpers.servers import free_port, stop_process

TOOLS = '''
from toolwire_server import Registry

registry = Registry("dev-loop")


@registry.tool()
def {name}(text: str) -> str:
    """Give the text back."""
    return text
'''


def _listed(folder: Path, url: str) -> str:
    done = run_toolwire("tools", "--server-url", url, "--json", env=clean_env(), cwd=folder, timeout_s=30)
    return done.stdout if done.returncode == 0 else ""


@contextmanager
def dev_loop(folder: Path, *args: str, env: dict[str, str]) -> Iterator[tuple[str, "subprocess.Popen[bytes]", Path]]:
    """`toolwire dev tools.py ARGS` in `folder`, looking at the file every 0.1 s, once it lists the file's tool
    `first`: the server's URL, the command's process and its log; stopped after."""
    (folder / "tools.py").write_text(TOOLS.format(name="first"))
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    log = folder / "dev.log"
    with log.open("w") as out:
        dev = subprocess.Popen(
            [TOOLWIRE, "dev", "tools.py", "--port", str(port), "--poll", "0.1", *args],
            cwd=folder,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait(lambda: '"first"' in _listed(folder, url), "the first tool listed", dev, log)
        yield url, dev, log
    finally:
        stop_process(dev)


def _wait(check: Callable[[], bool], what: str, dev: "subprocess.Popen[bytes]", log: Path) -> None:
    wait_until(check, what, proc=dev, log=log, interval_s=0.2)  # each look is a `toolwire tools` process


def test_a_changed_file_is_served_again_with_its_new_tool(tmp_path: Path) -> None:
    tools = tmp_path / "tools.py"
    no_node = tmp_path / "no-node"  # no Inspector here, on PATH or in ./node_modules
    with dev_loop(tmp_path, env=clean_env(TOOLWIRE_NODE_DIR=str(no_node))) as (url, dev, log):
        tools.write_text(TOOLS.format(name="second"))
        later = os.stat(tools).st_mtime_ns + 2_000_000_000  # a change even where mtimes are coarse
        os.utime(tools, ns=(later, later))
        _wait(lambda: '"second"' in _listed(tmp_path, url), "the changed tool listed", dev, log)
        assert '"first"' not in _listed(tmp_path, url)
    said = log.read_text()
    assert "toolwire dev: no MCP Inspector found; npm install @modelcontextprotocol/inspector (Node 22)" in said
    assert "toolwire dev: tools.py changed: restarting the server" in said
    assert "Traceback" not in said
    assert _listed(tmp_path, url) == ""  # the server stopped with it


def test_a_broken_file_is_one_line_and_the_next_change_serves_again(tmp_path: Path) -> None:
    tools = tmp_path / "tools.py"
    with dev_loop(tmp_path, "--no-inspector", env=clean_env()) as (url, dev, log):
        tools.write_text("def broken(:\n")
        _wait(lambda: "waiting for a change" in log.read_text(), "the broken file reported", dev, log)
        tools.write_text(TOOLS.format(name="fixed"))
        later = os.stat(tools).st_mtime_ns + 4_000_000_000
        os.utime(tools, ns=(later, later))
        _wait(lambda: '"fixed"' in _listed(tmp_path, url), "the fixed tool listed", dev, log)
    said = log.read_text()
    assert "tools.py line 1: SyntaxError: invalid syntax" in said
    assert "Traceback" not in said and "Inspector" not in said


def test_dev_on_a_missing_file_is_one_line(tmp_path: Path) -> None:
    done = run_toolwire("dev", "nothing.py", "--no-inspector", env=clean_env(), cwd=tmp_path, timeout_s=30)
    assert done.returncode == 2
    assert "no such file: nothing.py" in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
