"""A code-mode run on the worker fleet (SQLite, real `toolwire worker` processes): the worker driving the script is
killed -9 while a call of the script is in flight; another worker takes the run over and resumes the script from its
snapshot; the risky call later in the script pauses the run; `toolwire approve` on the script's run wakes the fleet,
which finishes it. Every tool's effect happens once."""

import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import suppress
from pathlib import Path

import pytest

from fleet.fleet_procs import FAST_TAKEOVER, ServerSpec, start_worker, started
from helpers.cli import REPO, clean_env, run_toolwire
from helpers.polling import wait_until
from toolwire_client.mistakes import WAITING
from toolwire_client.tools.code_mode.source import script_run_id

pytestmark = pytest.mark.timeout(240)
HERE = Path(__file__).resolve().parent
DRIVER = (sys.executable, str(HERE / "code_driver.py"), "cli")
SCRIPT = (
    "a = await lookup(n=1)\nb = await lookup(n=2)\nc = await lookup(n=3)\n"
    "paid = await pay(cents=a['value'] + b['value'] + c['value'])\nd = await lookup(n=4)\n[paid, d['value']]"
)


def test_a_script_taken_over_after_a_kill_and_approved_on_the_fleet_runs_each_call_once(tmp_path: Path) -> None:
    db, tools_db, gate = str(tmp_path / "runs.db"), tmp_path / "tools.sqlite3", tmp_path / "gate"
    gate.mkdir()
    (gate / "hold_lookup_2").write_text("")
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    path = os.pathsep.join([str(REPO), str(HERE), os.environ.get("PYTHONPATH", "")])
    env = {"CODE_MODE_SCRIPT": str(script), "PYTHONPATH": path}
    command = [sys.executable, "-m", "toolwire_server", "tests/code_mode/script_tools.py:registry", "--stdio"]
    server = ServerSpec(
        name="script",
        command=command,
        env={"SCRIPT_TOOLS_DB": str(tools_db), "SCRIPT_GATE_DIR": str(gate)},
        cwd=str(REPO),
    )

    def toolwire(*args: str) -> subprocess.CompletedProcess[str]:
        return run_toolwire(*args, "--db", db, env=clean_env(**env), command=DRIVER, timeout_s=120)

    workers = []
    first = start_worker(db, tmp_path / "first.log", 1, command=DRIVER, env_extra=env, servers=[server])
    workers.append(first)
    try:
        wait_until(lambda: started(first), "the first worker to take runs", timeout_s=60, interval_s=0.1)
        queued = toolwire("submit", "run the script", "--model", "scripted:coder", "--server", "script", "--code-mode",
                          "only")  # fmt: skip
        assert queued.returncode == 0, queued.stderr
        run_id = queued.stdout.strip()
        wait_until((gate / "lookup_2_started").exists, "the script's second call in flight", timeout_s=90)
        first.kill9()
        with suppress(ProcessLookupError, ValueError):  # its stdio server, orphaned in the held call
            os.kill(int((gate / "lookup_2_started").read_text()), signal.SIGKILL)
        (gate / "release").write_text("")

        second = start_worker(
            db, tmp_path / "second.log", 1, command=DRIVER, env_extra={**env, **FAST_TAKEOVER}, servers=[server]
        )
        workers.append(second)
        waiting = toolwire("wait", run_id, "--timeout", "120")
        assert waiting.returncode == WAITING, waiting.stdout + waiting.stderr + second.log.read_text()
        script_id = script_run_id(run_id, "call_code")
        approved = toolwire("approve", script_id)
        assert approved.returncode == 0, approved.stdout + approved.stderr
        done = toolwire("wait", run_id, "--timeout", "120")
        assert done.returncode == 0 and f"{run_id}: done (final_answer)" in done.stdout, (
            done.stdout + done.stderr + second.log.read_text()
        )
    finally:
        for w in workers:
            w.stop()
    assert "took over" in second.log.read_text(), second.log.read_text()
    with sqlite3.connect(tools_db) as conn:
        effects = dict(conn.execute("SELECT name, COUNT(*) FROM effects GROUP BY name").fetchall())
        calls = dict(conn.execute("SELECT name, COUNT(*) FROM calls GROUP BY name").fetchall())
    assert effects == {"lookup_1": 1, "lookup_2": 1, "lookup_3": 1, "pay": 1, "lookup_4": 1}
    assert calls == {"lookup_1": 1, "lookup_2": 2, "lookup_3": 1, "pay": 1, "lookup_4": 1}  # lookup_2 sent again
    assert 'the script said: [{"paid": 14}, 16]' in done.stdout, done.stdout
