"""`toolwire serve tools.py` finds the file's registry and serves stdio by default; each mistake around it (both
transports, a target beside a config that names one, a file with no or several registries) is one line; `toolwire
check FILE` is the config check (`serve --check` still works, with a note); `serve --config --stdio` does not need
the agents' token variables, which only HTTP reads. Issue 37 item 4."""

import subprocess
import sys
from pathlib import Path

import pytest

from helpers.cli import clean_env, run_toolwire

TOOLS = '''
from toolwire_server import Registry

registry = Registry("first-hour")


@registry.tool()
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()
'''


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "tools.py").write_text(TOOLS)
    return tmp_path


def _toolwire(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_toolwire(*args, env=clean_env(), cwd=folder, timeout_s=60)


def test_serve_a_file_finds_its_registry_on_stdio_by_default(folder: Path) -> None:
    server = f"{sys.executable} -m toolwire_server tools.py"  # no :registry, no --stdio
    done = _toolwire(folder, "call", "shout", "text=hi", "--server", server)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "HI"


def test_a_file_with_two_registries_uses_the_one_named_registry(folder: Path) -> None:
    (folder / "tools.py").write_text(TOOLS + "\nother = Registry('other')\n")
    done = _toolwire(folder, "tools", "--server", f"{sys.executable} -m toolwire_server tools.py", "--json")
    assert done.returncode == 0, done.stderr
    assert '"shout"' in done.stdout


@pytest.mark.parametrize(
    ("source", "args", "line"),
    [
        (TOOLS, ["--stdio", "--http"], "--stdio and --http both given: serve one transport (stdio is the default)"),
        ("x = 1\n", [], "'tools.py' holds no Registry: create one at its top level (registry = Registry()), or"),
        (TOOLS.replace("registry", "a") + "\nb = Registry('b')\n", [], "holds 2 registries (a, b): name one, e.g. "),
        (TOOLS, ["--config", "server.toml"], "tools.py and --config server.toml (tools = 'tools.py:registry') both"),
    ],
)
def test_each_mistake_is_one_line(folder: Path, source: str, args: list[str], line: str) -> None:
    (folder / "tools.py").write_text(source)
    (folder / "server.toml").write_text('tools = "tools.py:registry"\n')
    done = _toolwire(folder, "serve", "tools.py", *args)
    assert done.returncode != 0
    assert line in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_the_usage_line_names_a_file_or_a_module(folder: Path) -> None:
    done = _toolwire(folder, "serve", "--help")
    assert done.stdout.startswith("Usage: toolwire serve [OPTIONS] [FILE|MODULE[:ATTR]]\n"), done.stdout


def test_check_is_its_own_command_and_the_old_spelling_says_so(folder: Path) -> None:
    config = folder / "server.toml"
    config.write_text('tools = "tools.py:registry"\n[agents.support]\ntoken = "t"\ntools = ["shout"]\n')
    done = _toolwire(folder, "check", "server.toml")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "server.toml: ok: 1 tool, 1 agent, 0 limit rules, audit off"
    old = _toolwire(folder, "serve", "--check", "server.toml")
    assert old.returncode == 0 and old.stdout == done.stdout
    assert old.stderr.strip() == (
        "toolwire: `serve --check FILE` is now `toolwire check server.toml` (the old spelling goes in the next release)"
    )


def test_stdio_needs_no_token_variables_http_does(folder: Path) -> None:
    config = folder / "server.toml"
    config.write_text('tools = "tools.py:registry"\n[agents.support]\ntoken_env = "UNSET_TOKEN"\ntools = ["shout"]\n')
    server = f"{sys.executable} -m toolwire_server --config server.toml --stdio --agent support"
    done = _toolwire(folder, "call", "shout", "text=ok", "--server", server)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "OK"
    http = _toolwire(folder, "serve", "--config", "server.toml", "--http", "--port", "0")
    assert http.returncode == 1
    assert "agents.support: env var UNSET_TOKEN is unset or empty" in http.stderr
