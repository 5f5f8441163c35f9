"""A script survives its process and waits for a person: the agent runs in its own process (code_driver.py) over the
script tools on stdio, is killed -9 while a call of the script is in flight, and `resume` (another process) goes on
from the script's last snapshot: a call that came back is not made again, the one in flight is sent again only if
idempotent (same key), else the script gets "outcome unknown" as an exception. A risky call mid-script pauses the
run; `toolwire approve` from another process and one `resume` finish it, the call run once."""

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from helpers.cli import TOOLWIRE, clean_env
from helpers.polling import await_until
from store.procs import load
from toolwire_client.tools.code_mode.source import script_run_id

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DRIVER = str(HERE / "code_driver.py")

SCRIPT = """
import asyncio
total = 0
for n in range(1, 5):
    r = await lookup(n=n)
    total += r["value"]
rs = await asyncio.gather(*[lookup(n=n) for n in range(5, 8)])
total += sum(r["value"] for r in rs)
try:
    said = await note(text=f"total {total}")
except Exception as e:
    said = "note: " + str(e)
print(said)
total
"""
TOTAL = sum(n * n for n in range(1, 8))
LOOKUPS = [f"lookup_{n}" for n in range(1, 8)]


def _env(tmp_path: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    script = tmp_path / "script.py"
    if not script.exists():
        script.write_text(SCRIPT)
    env = clean_env(CODE_MODE_SCRIPT=str(script))
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(HERE), env.get("PYTHONPATH", "")])
    return {**env, **(extra or {})}


def spawn(db: str, run_id: str, tools_db: Path, gate: Path, tmp_path: Path) -> "subprocess.Popen[str]":
    argv = [sys.executable, DRIVER, "run", db, run_id, str(tools_db), str(gate)]
    return subprocess.Popen(
        argv, cwd=REPO, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


async def cli(tmp_path: Path, db: str, *args: str, real: bool = False) -> "subprocess.CompletedProcess[str]":
    command = [TOOLWIRE] if real else [sys.executable, DRIVER, "cli"]
    argv = [*command, *args, "--db", db]
    return await anyio.to_thread.run_sync(
        lambda: subprocess.run(argv, cwd=REPO, env=_env(tmp_path), capture_output=True, text=True, timeout=120)
    )


def counts(tools_db: Path, table: str) -> dict[str, int]:
    with sqlite3.connect(tools_db) as conn:
        return dict(conn.execute(f"SELECT name, COUNT(*) FROM {table} GROUP BY name").fetchall())


def kill_pid_in(marker: Path) -> None:
    with contextlib.suppress(ProcessLookupError, ValueError, FileNotFoundError):
        os.kill(int(marker.read_text()), signal.SIGKILL)


@pytest.mark.parametrize("held", ["lookup_1", "lookup_2", "lookup_4", "lookup_6", "lookup_7", "note"])
async def test_a_script_killed_mid_call_resumes_from_its_snapshot_each_call_once(held: str, tmp_path: Path) -> None:
    db, tools_db, gate = str(tmp_path / "runs.sqlite3"), tmp_path / "tools.sqlite3", tmp_path / "gate"
    gate.mkdir()
    (gate / f"hold_{held}").write_text("")
    proc = spawn(db, "run_killed", tools_db, gate, tmp_path)
    try:
        await await_until((gate / f"{held}_started").exists, f"the script's {held} call in flight", proc=proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    kill_pid_in(gate / f"{held}_started")  # its stdio server, orphaned in the held call
    (gate / "release").write_text("")

    parent = await load(db, "run_killed")
    [sent] = parent.pending
    assert (parent.status, sent.call.name, sent.state) == ("running", "run_code", "sent")
    script = await load(db, script_run_id("run_killed", sent.call.id))
    assert script.status == "running" and script.script is not None and script.script.snapshot is not None
    assert [p.state for p in script.pending] and all(p.state == "sent" for p in script.pending)

    done = await cli(tmp_path, db, "resume", "run_killed")
    assert done.returncode == 0 and "run_killed: done (final_answer)" in done.stdout, done.stdout + done.stderr
    parent, script = await load(db, "run_killed"), await load(db, script_run_id("run_killed", sent.call.id))
    assert script.status == "done" and parent.status == "done"
    effects, calls = counts(tools_db, "effects"), counts(tools_db, "calls")
    assert effects == {**{name: 1 for name in LOOKUPS}, "note": 1}  # every tool's effect exactly once
    batch = ["lookup_5", "lookup_6", "lookup_7"]
    in_flight = batch if held in batch else [held]  # the held call's batch
    for name in (name for name in LOOKUPS if name != held):  # one that came back is not made again; its batch's are
        assert calls[name] == 1 or (name in in_flight and calls[name] == 2), (name, calls)
    if held == "note":  # not idempotent: never sent again; the script got its unknown outcome as an exception
        assert calls["note"] == 1
        assert script.final_answer == f"note: note failed (outcome_unknown): {_unknown('note')}\n{TOTAL}"
    else:  # idempotent: sent again with the same key, its effect not repeated
        assert calls[held] == 2 and calls["note"] == 1
        assert script.final_answer == f"noted: total {TOTAL}\n{TOTAL}"
    assert parent.final_answer == f"the script said: {script.final_answer}"


def _unknown(name: str) -> str:
    from toolwire_client import texts

    return texts.outcome_unknown(name)


async def test_a_risky_call_mid_script_waits_and_an_approval_from_another_process_resumes_it(tmp_path: Path) -> None:
    db, tools_db, gate = str(tmp_path / "runs.sqlite3"), tmp_path / "tools.sqlite3", tmp_path / "gate"
    gate.mkdir()
    (tmp_path / "script.py").write_text(
        "a = await lookup(n=1)\nb = await lookup(n=2)\npaid = await pay(cents=a['value'] + b['value'])\n"
        "c = await lookup(n=3)\n[paid, c['value']]"
    )
    proc = spawn(db, "run_paying", tools_db, gate, tmp_path)
    out, err = await anyio.to_thread.run_sync(lambda: proc.communicate(timeout=120))
    assert "run_paying: waiting_for_approval" in out, out + err
    parent = await load(db, "run_paying")
    [waiting] = parent.pending
    script_id = script_run_id("run_paying", waiting.call.id)
    assert (waiting.call.name, waiting.state, waiting.child_run_id) == ("run_code", "waiting_on_child", script_id)
    script = await load(db, script_id)
    [pay] = script.pending
    assert (script.status, pay.call.name, pay.state, pay.call.arguments) == (
        "waiting_for_approval",
        "pay",
        "pending_approval",
        {"cents": 5},
    )
    assert counts(tools_db, "calls") == {"lookup_1": 1, "lookup_2": 1}

    for run_id in ("run_paying", script_id):  # each replays to where its record waits
        replayed = await cli(tmp_path, db, "replay", run_id, real=True)
        assert f"{run_id}: identical" in replayed.stdout, replayed.stdout + replayed.stderr
    listed = await cli(tmp_path, db, "approvals", real=True)
    assert script_id in listed.stdout and "pay" in listed.stdout, listed.stdout + listed.stderr
    assert "script of run_paying" in listed.stdout, listed.stdout
    alone = await cli(tmp_path, db, "resume", script_id, real=True)  # a script goes on only with its run
    assert alone.returncode == 1 and "`toolwire resume run_paying` resumes it" in alone.stderr, alone.stderr
    approved = await cli(tmp_path, db, "approve", script_id, real=True)
    assert approved.returncode == 0, approved.stderr
    done = await cli(tmp_path, db, "resume", "run_paying")
    assert done.returncode == 0 and "run_paying: done (final_answer)" in done.stdout, done.stdout + done.stderr
    assert counts(tools_db, "calls") == {"lookup_1": 1, "lookup_2": 1, "pay": 1, "lookup_3": 1}
    script = await load(db, script_id)
    assert script.final_answer == '[{"paid": 5}, 9]'
    replayed = await cli(tmp_path, db, "replay", script_id, real=True)
    assert f"{script_id}: identical" in replayed.stdout, replayed.stdout + replayed.stderr
    shown = await cli(tmp_path, db, "trace", "show", "run_paying", real=True)
    assert 'pay({"cents": 5}) [approved by' in shown.stdout, shown.stdout
