"""The `toolwire` command in its own process, as a user or CI runs it: `run_toolwire(*args)`.

`clean_env()` is the environment of a machine with no provider keys, no OTEL_* settings and no TOOLWIRE_* defaults,
so a run uses only what the test passes."""

import functools
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TOOLWIRE = str(Path(sys.executable).with_name("toolwire"))
"""The installed entry point of this venv."""


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "ANTHROPIC_", "OPENAI_", "TOOLWIRE_"))}
    return {**env, **extra}


def run_toolwire(
    *args: str,
    env: dict[str, str] | None = None,
    timeout_s: float = 120,
    command: Sequence[str] = (TOOLWIRE,),
    cwd: Path = REPO,
) -> subprocess.CompletedProcess[str]:
    """`toolwire ARGS` from the repo's folder (or `cwd`), output captured; `command` replaces the entry point (e.g. a
    driver script that registers a test's scripted model first). env None: this process's environment."""
    return subprocess.run([*command, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s)


@functools.cache
def packaged_scripts() -> list[str]:
    """The scripted models the package itself has, read in a fresh process: tests' drivers register their own
    scripted models in this one (a `toolwire` subprocess lists only the package's)."""
    listed = "from toolwire_client.models.providers import scripted_names; print(*scripted_names())"
    done = subprocess.run([sys.executable, "-c", listed], capture_output=True, text=True, check=True)
    return done.stdout.split()
