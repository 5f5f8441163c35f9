"""The package as a user gets it: `python -m build` makes an sdist and a wheel, the wheel installs into a fresh venv
(its dependencies from PyPI, as `pip install` does), and from a folder outside the checkout, with nothing of the
checkout on the path, `toolwire demo` runs the support agent end to end and `toolwire call` calls a tool of a file
there. Issue 37 item 7. Heavy (a build, then pip fetching ~60 packages: about 2 minutes here), so `alone`."""

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from helpers.cli import REPO, clean_env

pytestmark = [pytest.mark.alone, pytest.mark.timeout(900)]

TOOLS = '''
from toolwire_server import Registry

registry = Registry("installed")


@registry.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
'''


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

    (elsewhere / "tools.py").write_text(TOOLS)
    call = _run(
        [str(bin_dir / "toolwire"), "call", "add", "a=2", "b=40", "--server", "toolwire serve tools.py"], elsewhere, env
    )
    assert call.stdout.strip() == "42"
    assert not (dev_tools := [n for n in ("pytest", "mypy", "ruff", "playwright") if (bin_dir / n).exists()]), dev_tools
