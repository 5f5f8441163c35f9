"""The package as a user gets it: `python -m build` makes an sdist and a wheel, the wheel installs into a fresh venv
(its dependencies from PyPI, as `pip install` does), and from a folder outside the checkout, with nothing of the
checkout on the path and no provider key, the README's first hour: `toolwire demo`, then a `tools.py` of one's own
seen with `toolwire tools`, called with `toolwire call`, run with `--model test` (a risky tool pauses it: approve,
resume) and with `--model script:FILE`, and read back with `trace show`. Issue 37 items 7 and "done when". Heavy (a
build, then pip fetching ~60 packages: about 2 minutes here), so `alone`."""

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from helpers.cli import REPO, clean_env
from helpers.user_tools import RISKY_TOOLS

pytestmark = [pytest.mark.alone, pytest.mark.timeout(900)]


SCRIPT = """[
  {"calls": [{"name": "add", "args": {"a": 20, "b": 22}}]},
  {"text": "the sum is 42"}
]
"""


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout_s: float = 600) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s)
    assert done.returncode == 0, f"{argv}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def test_the_wheel_installs_and_runs_outside_the_checkout(tmp_path: Path) -> None:
    dist = tmp_path / "dist"  # built by this venv's `build` (the dev extra)
    _run([sys.executable, "-m", "build", "--outdir", str(dist), str(REPO)], tmp_path, dict(os.environ))
    wheels, sdists = list(dist.glob("toolwire-*.whl")), list(dist.glob("toolwire-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(dist.iterdir())

    env = {k: v for k, v in clean_env().items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    fresh = tmp_path / "venv"
    venv.create(fresh, with_pip=True)
    bin_dir = fresh / "bin"
    _run([str(bin_dir / "pip"), "install", "-q", str(wheels[0])], tmp_path, env)
    env = {**env, "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", "HOME": str(tmp_path / "home")}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    where = _run(
        [str(bin_dir / "python"), "-c", "import toolwire_client; print(toolwire_client.__file__)"], elsewhere, env
    )
    assert where.stdout.startswith(str(fresh)), where.stdout  # the installed copy, not the checkout
    version = _run([str(bin_dir / "toolwire"), "--version"], elsewhere, env)
    assert version.stdout.strip() == "toolwire, version 0.1.0"

    demo = _run([str(bin_dir / "toolwire"), "demo", "--db", str(tmp_path / "runs.db")], elsewhere, env)
    assert "waiting for approval" in demo.stdout and "resuming the saved run" in demo.stdout, demo.stdout
    assert "Traceback" not in demo.stderr

    (elsewhere / "tools.py").write_text(RISKY_TOOLS)
    _first_hour(bin_dir / "toolwire", elsewhere, env, tmp_path / "first-hour.db")
    assert not (dev_tools := [n for n in ("pytest", "mypy", "ruff", "playwright") if (bin_dir / n).exists()]), dev_tools


def _first_hour(toolwire: Path, here: Path, env: dict[str, str], db: Path) -> None:
    """The README's first hour from the installed command, each step checked by what it printed."""
    server = ["--server", "mine=toolwire serve tools.py"]  # a named server, as --trust and --allow-sampling take

    def step(*args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([str(toolwire), *args], cwd=here, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == code, f"{args}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        assert "Traceback" not in done.stderr, done.stderr
        return done

    listed = json.loads(step("tools", *server, "--json").stdout)
    assert {tool["name"] for tool in listed} == {"add", "divide", "greet", "send_invoice"}, listed
    assert step("call", "add", "a=2", "b=40", *server).stdout.strip() == "42"

    paused = json.loads(
        step("run", "use every tool", "--model", "test", *server, "--db", str(db), "--json", code=4).stdout
    )
    run_id = paused["run_id"]
    assert paused["status"] == "waiting_for_approval", paused["status"]
    step("approve", run_id, "--db", str(db))
    resumed = step("resume", run_id, "--db", str(db))
    assert "invoice of" in resumed.stdout, resumed.stdout
    shown = step("trace", "show", run_id, "--db", str(db)).stdout
    assert "send_invoice" in shown and "add" in shown, shown

    (here / "turns.json").write_text(SCRIPT)
    scripted = json.loads(step("run", "add", "--model", "script:turns.json", *server, "--db", str(db), "--json").stdout)
    assert scripted["status"] == "done" and scripted["final_answer"] == "the sum is 42", scripted
