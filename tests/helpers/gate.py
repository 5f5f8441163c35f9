"""A kill point inside a test tool server: a tool call holds at a gate so the test can kill a process with that call
in flight. The gate is a folder another process (the test) writes to; a file is the only event it can send.

The tool servers that use it (tests/store/durable_tools.py, tests/code_mode/script_tools.py,
bench/code_mode_chaos_tools.py) run in their own processes, loaded from a path, so they put tests/ on sys.path
themselves before `from helpers.gate import held`."""

import os
from pathlib import Path

import anyio

POLL_S = 0.02


async def held(gate_variable: str, hold: str, started: str | None = None) -> None:
    """While $GATE/hold_<hold> exists (GATE: the folder named by the environment variable `gate_variable`), write
    $GATE/<started>_started with this process's pid (`started` defaults to `hold`), then wait until $GATE/release
    exists. No gate, or no hold file: return at once."""
    gate = Path(os.environ.get(gate_variable, "/nonexistent"))
    if not (gate / f"hold_{hold}").exists():
        return
    (gate / f"{started or hold}_started").write_text(str(os.getpid()))
    while not (gate / "release").exists():  # noqa: ASYNC110 - set by another process, a file is the only event
        await anyio.sleep(POLL_S)
