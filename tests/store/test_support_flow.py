"""The whole human-in-the-loop flow on the real support tools (`toolwire serve examples.support_tools:registry
--stdio`) with the installed `toolwire` command in separate processes: approvals, approve, resume, trace, replay."""

import json
import sqlite3
from pathlib import Path

from procs import load, run_cli, support_server

from toolwire_client.assembly.agents import build_agent
from toolwire_client.config import RunConfig, RunLimits
from toolwire_client.store import open_store


def refunded_cents(support_db: Path, order_id: str) -> int:
    conn = sqlite3.connect(support_db)
    try:
        return int(
            conn.execute(
                "SELECT COALESCE(SUM(amount_cents), 0) FROM refunds WHERE order_id = ?", (order_id,)
            ).fetchone()[0]
        )
    finally:
        conn.close()


async def test_support_refund_waits_for_a_person_then_resumes_elsewhere(db: str, tmp_path: Path) -> None:
    support_db = tmp_path / "support.sqlite3"
    server = support_server(support_db)
    config = RunConfig(model="scripted:support_demo", servers=[server], limits=RunLimits(max_steps=8))
    store = await open_store(db)
    try:
        state = await build_agent(config, store=store).run("Refund one item of order A123")
    finally:
        await store.aclose()
    run_id = state.run_id
    assert state.status == "waiting_for_approval"  # issue_refund is risky by the server's own policy
    assert refunded_cents(support_db, "A123") == 0
    [waiting] = state.pending
    amount = waiting.call.arguments["amount_cents"]
    assert (waiting.call.name, waiting.state) == ("issue_refund", "pending_approval")

    listed = await run_cli(db, "approvals", real=True)
    assert run_id in listed.stdout and "issue_refund" in listed.stdout and f'"amount_cents": {amount},' in listed.stdout
    approved = await run_cli(db, "approve", run_id, real=True)
    assert approved.returncode == 0 and "approved" in approved.stdout, approved.stderr
    resumed = await run_cli(db, "resume", run_id, real=True)
    assert resumed.returncode == 0 and f"{run_id}: done (final_answer)" in resumed.stdout, resumed.stderr
    assert refunded_cents(support_db, "A123") == amount

    final = await load(db, run_id)
    shown = await run_cli(db, "trace", "show", run_id, real=True)
    lines = shown.stdout.split("\ninput tokens by part")[0].splitlines()  # the step table, then where tokens went
    assert len(lines) == sum(max(1, len(s.tool_calls)) for s in final.steps) + 1
    assert lines[0].startswith('step 1 | get_order({"order_id": "A123"}) | ')
    assert lines[-2].startswith(f"step {len(final.steps)} | final: Refunded one keyboard")
    assert lines[-2].endswith(f"tokens so far {final.usage.total_tokens}")
    assert lines[-1].startswith("-> done, final_answer: finished with a final answer")
    exported = await run_cli(db, "trace", "export", run_id, "--json", real=True)
    assert json.loads(exported.stdout)["steps"][0]["model_reply"]["message"]["tool_calls"][0]["name"] == "get_order"
    replayed = await run_cli(db, "replay", run_id, real=True)
    assert replayed.returncode == 0 and f"{run_id}: identical" in replayed.stdout, replayed.stdout + replayed.stderr
    changed = await run_cli(db, "replay", run_id, "--max-steps", "2", real=True)
    assert changed.returncode == 1 and "differs: step 3" in changed.stdout
    runs = await run_cli(db, "runs", real=True)
    assert run_id in runs.stdout and "done" in runs.stdout
