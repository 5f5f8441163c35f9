"""Code mode killed -9 mid-script (issue 36): the fan-out task's script, its agent killed at seeded random points and
resumed from another process; each tool's executions counted from the tool server's own record.

The task is code_mode_bench's ("total the refunds of the 20 newest orders of customer cus_7001 and refund 1000 cents
on the one with the most refunded"): one run_code whose script makes 22 tool calls (search_orders, 20 list_refunds in
one asyncio.gather, issue_refund, which waits for approval), over bench/code_mode_chaos_tools.py served as a real
process, over stdio and over HTTP (uvicorn on 127.0.0.1) in alternate trials.

A trial: the agent runs in its own process (approving the refund itself, so the kill can land on it too) until the
chosen call is in flight, held by a gate file in the tool server (before or after it executes); then it is killed -9
(its stdio server too: orphaned in the held call), the hold released, and `toolwire resume` in another process goes
on from the script's last snapshot; where the resumed run waits for the refund's approval, `toolwire approve` (the
real CLI, another process) approves it and one more `resume` finishes it. Checked: the run is `done` with the right
answer (0 lost); every call of the script executed under one idempotency key, at most twice (the resend of a call in
flight at the kill), each key's effect once (one refund of 1000 cents); a call that came back was not made again.

One more trial pauses for the refund's approval mid-script with no kill: the agent's process ends
`waiting_for_approval`, the refund not executed; `toolwire approve` from another process and one `resume` finish it.

`python -m bench.code_mode_chaos [--seed N] [--trial K]` prints the table (the seed and each kill point are printed,
so `--seed N --trial K` replays one); `run()` returns the figures for bench/run.py. About 1-2 minutes.
"""

import argparse
import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from bench.code_mode_bench import CUSTOMER, SCRIPT, TASK, answer  # noqa: E402

from helpers.cli import TOOLWIRE, clean_env  # noqa: E402
from helpers.polling import wait_until  # noqa: E402
from helpers.servers import HttpServer  # noqa: E402
from store.procs import load as saved_run  # noqa: E402
from toolwire_client.models.seed_scripts import SCRIPTS, last_results  # noqa: E402
from toolwire_shared.messages import AssistantMessage, Message, ToolCall  # noqa: E402

TOOLS = "bench/code_mode_chaos_tools.py:registry"
MODEL = "code_chaos"
SEED = 36
TRIALS = 10
REFUND_CENTS = 1000


def coder(messages: list[Message]) -> AssistantMessage:
    """The scripted model: one run_code with the fan-out script, then the answer read from the script's result."""
    results = last_results(messages)
    if not results:
        return AssistantMessage(tool_calls=[ToolCall(id="c_code", name="run_code", arguments={"code": SCRIPT})])
    try:
        got = json.loads(results[-1].content)
        return AssistantMessage(text=answer(got["total_cents"], got["orders"], got["largest"], got["refunded"]))
    except (ValueError, KeyError, TypeError):
        return AssistantMessage(text=f"the script failed: {results[-1].content}")


SCRIPTS[MODEL] = coder


# ---- the agent's process: `python -m bench.code_mode_chaos agent DB RUN_ID SERVER_JSON [--approve]`, and the real
# CLI with the scripted model registered: `python -m bench.code_mode_chaos cli resume RUN_ID --db DB`.


async def agent(db: str, run_id: str, server: dict[str, Any], approve: bool) -> None:
    from bench.code_mode_bench import _approve_and_finish

    from toolwire_client.assembly.agents import build_agent
    from toolwire_client.config import RunConfig, RunLimits, ServerSpec
    from toolwire_client.store import open_store
    from toolwire_client.strategies.code_mode import CodeMode

    config = RunConfig(
        model=f"scripted:{MODEL}",
        servers=[ServerSpec(**server)],
        limits=RunLimits(max_steps=4),
        code_mode=CodeMode(only=True),
    )
    store = await open_store(db)
    try:
        built = build_agent(config, store=store)
        state = await built.run(TASK, run_id)
        if approve:
            state = await _approve_and_finish(built, store, state)
        print(f"{state.run_id}: {state.status} ({state.stop_reason})", flush=True)
    finally:
        await store.aclose()


# ---- the bench


@dataclass
class Trial:
    number: int
    transport: str
    kill_point: str  # LABEL/PHASE, or "" for the approval trial
    processes: list[str] = field(default_factory=list)  # what ran after the kill, in order
    status: str = ""
    answer_right: bool = False
    executions: dict[str, int] = field(default_factory=dict)  # per tool, from the server's record
    resent: list[str] = field(default_factory=list)  # calls executed twice (same key)
    keys_per_call_ok: bool = False  # every call of the script: one key, at most two executions
    refunds_made: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def kill_points(seed: int, trials: int) -> list[tuple[str, str]]:
    """`trials` (label, phase) points: the kind of call first (search, one of the 20 lookups, the refund), evenly, so
    the refund and the batch are both hit in 10; then which order and whether before or after it executes."""
    rng = random.Random(seed)
    points = []
    for _ in range(trials):
        kind = rng.choice(["search_orders", "list_refunds", "issue_refund"])
        label = f"list_refunds_C70{rng.randint(5, 24):02d}" if kind == "list_refunds" else kind
        points.append((label, rng.choice(["before", "after"])))
    return points


def expected(support_db: Path) -> tuple[str, str, int]:
    """The right answer, the order the refund is for and its refunds so far, read from the ledger before the run."""
    from examples import support_tools as ledger

    before = os.environ.get(ledger.DB_ENV)
    os.environ[ledger.DB_ENV] = str(support_db)
    try:
        orders = [o["order_id"] for o in ledger.search_orders(CUSTOMER)]
        totals = {o: sum(r["amount_cents"] for r in ledger.list_refunds(o)) for o in orders}
    finally:
        if before is None:
            os.environ.pop(ledger.DB_ENV)
        else:
            os.environ[ledger.DB_ENV] = before
    largest = max(totals, key=lambda k: totals[k])
    return answer(sum(totals.values()), len(orders), largest, REFUND_CENTS), largest, totals[largest]


def _env(**extra: str) -> dict[str, str]:
    env = clean_env(**extra)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO), env.get("PYTHONPATH", "")] if p)
    return env


def _ours(*args: str) -> list[str]:
    return [sys.executable, "-m", "bench.code_mode_chaos", *args]


def _run(argv: list[str]) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(argv, cwd=REPO, env=_env(), capture_output=True, text=True, timeout=120)


def load(db: str, run_id: str) -> Any:
    return anyio.run(saved_run, db, run_id)


def finish(trial: Trial, db: str, run_id: str) -> None:
    """`toolwire resume` from another process; if the run waits for the refund's approval, `toolwire approve` from
    another and resume again. At most three rounds: a run that needs more is counted lost."""
    for _ in range(3):
        state = load(db, run_id)
        if state.status == "waiting_for_approval":
            script_id = state.pending[0].child_run_id or run_id
            approved = _run([TOOLWIRE, "approve", script_id, "--db", db])
            trial.processes.append("approve")
            if approved.returncode != 0:
                trial.problems.append(f"approve failed: {approved.stderr.strip()}")
                return
        elif state.status in ("done", "failed", "cancelled"):
            return
        resumed = _run(_ours("cli", "resume", run_id, "--db", db))
        trial.processes.append("resume")
        if resumed.returncode != 0 and load(db, run_id).status != "waiting_for_approval":  # waiting: exit 4
            trial.problems.append(f"resume exited {resumed.returncode}: {resumed.stderr.strip()[-300:]}")
            return


def check(trial: Trial, folder: Path, db: str, run_id: str, right: str, largest: str) -> None:
    state = load(db, run_id)
    trial.status = state.status
    trial.answer_right = state.final_answer == right
    if state.status != "done":
        trial.problems.append(f"run {state.status}, not done (lost)")
    if not trial.answer_right:
        trial.problems.append(f"answer {state.final_answer!r}, expected {right!r}")
    with sqlite3.connect(folder / "calls.sqlite3") as conn:
        rows = conn.execute("SELECT tool, label, key FROM executions").fetchall()
    with sqlite3.connect(folder / "support.sqlite3") as conn:
        refunds = conn.execute("SELECT order_id, amount_cents FROM refunds WHERE id NOT LIKE 're_seed_%'").fetchall()
    trial.executions = dict(Counter(tool for tool, _, _ in rows))
    per_call: dict[str, list[str | None]] = {}
    for _, label, key in rows:
        per_call.setdefault(label, []).append(key)
    calls = ["search_orders", *[f"list_refunds_C70{n:02d}" for n in range(5, 25)], "issue_refund"]
    trial.resent = sorted(label for label, keys in per_call.items() if len(keys) > 1)
    missing = [c for c in calls if c not in per_call]
    bad = [c for c, keys in per_call.items() if len(set(keys)) != 1 or None in keys or len(keys) > 2]
    trial.keys_per_call_ok = not missing and not bad and set(per_call) == set(calls)
    if missing:
        trial.problems.append(f"never executed: {missing}")
    if bad:
        trial.problems.append(f"executed under more than one key, without one, or more than twice: {bad}")
    trial.refunds_made = len(refunds)
    if refunds != [(largest, REFUND_CENTS)]:
        trial.problems.append(f"refunds made {refunds}, expected one of {REFUND_CENTS} on {largest}")


def one_trial(number: int, transport: str, point: tuple[str, str] | None, root: Path) -> Trial:
    label, phase = point or ("", "")
    trial = Trial(number, transport, f"{label}/{phase}" if point else "")
    folder = root / f"trial{number}"
    gate = folder / "gate"
    gate.mkdir(parents=True)
    db, run_id = str(folder / "runs.sqlite3"), f"chaos_{number}"
    right, largest, _ = expected(folder / "support.sqlite3")
    tool_env = {
        "TOOLWIRE_SUPPORT_DB": str(folder / "support.sqlite3"),
        "CHAOS_CALLS_DB": str(folder / "calls.sqlite3"),
        "CHAOS_GATE_DIR": str(gate),
        "PYTHONPATH": _env()["PYTHONPATH"],
    }
    if point:
        (gate / f"hold_{label}_{phase}").write_text("")
    with contextlib.ExitStack() as stack:
        if transport == "http":
            http = stack.enter_context(HttpServer(TOOLS, env=tool_env))
            server: dict[str, Any] = {"name": "ledger", "url": http.url}
        else:
            command = [sys.executable, "-m", "toolwire_server", TOOLS, "--stdio"]
            server = {"name": "ledger", "command": command, "env": tool_env, "cwd": str(REPO)}
        argv = _ours("agent", db, run_id, json.dumps(server), *(["--approve"] if point else []))
        proc = subprocess.Popen(argv, cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if point:
            started = gate / f"{label}_started"
            try:
                wait_until(started.exists, f"the script's {label} call held {phase}", timeout_s=120, proc=proc)
            finally:
                proc.send_signal(signal.SIGKILL)
                proc.wait(timeout=60)
            if transport == "stdio":  # its server, orphaned in the held call
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(started.read_text()), signal.SIGKILL)
            (gate / "release").write_text("")
        else:
            out, err = proc.communicate(timeout=120)
            if f"{run_id}: waiting_for_approval" not in out:
                trial.problems.append(f"the agent did not stop for the approval: {out} {err[-300:]}")
            with contextlib.suppress(sqlite3.OperationalError), sqlite3.connect(folder / "calls.sqlite3") as conn:
                early = conn.execute("SELECT COUNT(*) FROM executions WHERE tool = 'issue_refund'").fetchone()[0]
                if early:
                    trial.problems.append("the refund executed before its approval")
        finish(trial, db, run_id)
        check(trial, folder, db, run_id, right, largest)
    return trial


def trials(seed: int, only: int | None = None) -> list[Trial]:
    points = kill_points(seed, TRIALS)
    plan: list[tuple[int, str, tuple[str, str] | None]] = [
        (n + 1, "stdio" if n % 2 == 0 else "http", point) for n, point in enumerate(points)
    ]
    plan.append((TRIALS + 1, "http", None))  # the approval trial, no kill
    print(f"seed {seed}; kill points: " + ", ".join(f"{n}:{t}:{'/'.join(p) if p else 'approval'}" for n, t, p in plan))
    print(HEADER, flush=True)
    done = []
    with tempfile.TemporaryDirectory(prefix="toolwire-code-chaos-") as root:
        for number, transport, point in plan:
            if only is not None and number != only:
                continue
            trial = one_trial(number, transport, point, Path(root))
            print(row(trial), flush=True)
            done.append(trial)
    return done


def row(t: Trial) -> str:
    per_tool = ", ".join(f"{k} {v}" for k, v in sorted(t.executions.items()))
    return (
        f"| {t.number} | {t.transport} | {t.kill_point or 'none: approved from another process'} | "
        f"{' + '.join(t.processes)} | {per_tool} | {_resent(t.resent)} | {t.refunds_made} | {t.status} | "
        f"{'yes' if t.answer_right else 'NO'} |" + (f" {'; '.join(t.problems)}" if t.problems else "")
    )


def _resent(labels: list[str]) -> str:
    """`19 list_refunds, 1 issue_refund`: how many calls of each tool were executed a second time."""
    tools = Counter(label.split("_C70")[0] for label in labels)
    return ", ".join(f"{n} {tool}" for tool, n in sorted(tools.items())) or "-"


HEADER = (
    "| trial | transport | kill point | after the kill | executions per tool (server's record) | sent again (same key)"
    " | refunds | status | answer right |\n|---:|---|---|---|---|---|---:|---|---|"
)


def run(seed: int = SEED) -> dict[str, Any]:
    started = time.perf_counter()
    done = trials(seed)
    calls = 22 * len(done)
    twice = sum(len(t.resent) for t in done)
    figures = [
        {"name": "runs done with the right answer (10 killed -9 and resumed, 1 approved from another process)",
         "value": sum(t.ok for t in done), "unit": "runs", "reference": "runs", "reference_value": len(done)},
        {"name": "runs with a call executed under a second key, more than twice, or never",
         "value": sum(not t.keys_per_call_ok for t in done), "unit": "runs", "reference": "runs",
         "reference_value": len(done)},
        {"name": "refunds made (each key's effect once)", "value": sum(t.refunds_made for t in done), "unit": "refunds",
         "reference": "runs (one refund each)", "reference_value": len(done)},
        {"name": "calls executed a second time, with their key (the batch the kill was in)", "value": twice,
         "unit": "calls", "reference": "calls the scripts made", "reference_value": calls},
    ]  # fmt: skip
    failed = [f"trial {t.number} FAILED ({t.kill_point}): {'; '.join(t.problems)}" for t in done if not t.ok]
    notes = [
        f"seed {seed}: `python -m bench.code_mode_chaos --seed {seed} --trial N` replays trial N; "
        "kill points: " + ", ".join(f"{t.number} {t.transport} {t.kill_point or 'approval'}" for t in done),
        *failed,
    ]
    return {
        "seed": seed,
        "figures": figures,
        "notes": notes,
        "all_ok": not failed,
        "trials": [row(t) for t in done],
        "took_s": time.perf_counter() - started,
    }


def main(argv: list[str]) -> int:
    if argv[:1] == ["agent"]:
        db, run_id, server = argv[1:4]
        anyio.run(agent, db, run_id, json.loads(server), "--approve" in argv)
        return 0
    if argv[:1] == ["cli"]:
        from toolwire_client.cli import main as cli

        cli(argv[1:], prog_name="toolwire")
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=SEED, help="seed of the kill points (printed by every run)")
    parser.add_argument("--trial", type=int, help="replay one trial of that seed")
    options = parser.parse_args(argv)
    if options.trial is not None:
        done = trials(options.seed, options.trial)
        return 0 if all(t.ok for t in done) else 1
    result = run(options.seed)
    print(f"took {result['took_s']:.0f} s; {'all trials ok' if result['all_ok'] else 'SOME TRIALS FAILED'}")
    return 0 if result["all_ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
