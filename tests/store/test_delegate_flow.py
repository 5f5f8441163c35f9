"""An approval inside a sub-agent pauses its parent: the real support tools over stdio and the installed `toolwire`
command in separate processes, on SQLite and PostgreSQL. The child's refund waits; the parent waits on its delegate
call; `approvals` shows the child's call; after `approve`, one `resume PARENT` resumes the child, then the parent."""

from pathlib import Path

import anyio
from procs import kill9, load, rows, run_cli, setup_dirs, spawn_run, support_server
from test_support_flow import refunded_cents

from helpers.polling import await_until
from toolwire_client.assembly.agents import build_agent
from toolwire_client.config import RunConfig, RunLimits
from toolwire_client.run.ordering import check_order
from toolwire_client.store import open_store
from toolwire_client.strategies.delegation import Delegation
from toolwire_client.tools.delegate import child_run_id
from toolwire_shared.messages import ToolResultMessage


async def test_an_approval_in_a_sub_agent_pauses_the_parent_and_one_resume_finishes_both(
    db: str, tmp_path: Path
) -> None:
    support_db = tmp_path / "support.sqlite3"
    server = support_server(support_db)
    config = RunConfig(
        model="scripted:delegates", servers=[server], limits=RunLimits(max_steps=10), delegate=Delegation()
    )
    store = await open_store(db)
    try:
        parent = await build_agent(config, store=store).run("Refund one item of order A123")
    finally:
        await store.aclose()
    assert parent.status == "waiting_for_approval", parent.report
    [delegated] = parent.pending
    child_id = child_run_id(parent.run_id, delegated.call.id)
    assert (delegated.call.name, delegated.state, delegated.child_run_id) == ("delegate", "waiting_on_child", child_id)
    child = await load(db, child_id)
    assert child.status == "waiting_for_approval" and child.parent_run_id == parent.run_id
    [refund] = child.pending
    assert (refund.call.name, refund.state) == ("issue_refund", "pending_approval")
    assert refunded_cents(support_db, "A123") == 0

    listed = await run_cli(db, "approvals", real=True)
    assert child_id in listed.stdout and "issue_refund" in listed.stdout, listed.stdout + listed.stderr
    assert f"sub-agent of {parent.run_id}" in listed.stdout
    assert "delegate" not in listed.stdout  # the parent's call waits on the child; a person decides only there
    waiting = await run_cli(db, "replay", parent.run_id, real=True)  # paused where the record pauses
    assert f"{parent.run_id}: identical" in waiting.stdout, waiting.stdout + waiting.stderr
    approved = await run_cli(db, "approve", child_id, real=True)
    assert approved.returncode == 0, approved.stderr
    resumed = await run_cli(db, "resume", parent.run_id, real=True)
    assert resumed.returncode == 0 and f"{parent.run_id}: done (final_answer)" in resumed.stdout, resumed.stderr
    assert refunded_cents(support_db, "A123") == refund.call.arguments["amount_cents"]  # run exactly once

    child, parent = await load(db, child_id), await load(db, parent.run_id)
    assert child.status == "done" and child.final_answer is not None
    assert parent.final_answer == f"A sub-agent worked on it: {child.final_answer}"
    assert [m.name for m in parent.messages if isinstance(m, ToolResultMessage)] == ["delegate"]
    assert parent.usage.total_tokens == sum(s.usage.total_tokens for s in parent.steps) + child.usage.total_tokens
    check_order(parent.messages)
    check_order(child.messages)
    again = await run_cli(db, "resume", parent.run_id, real=True)
    assert again.returncode != 0 and refunded_cents(support_db, "A123") == refund.call.arguments["amount_cents"]

    runs = (await run_cli(db, "runs", real=True)).stdout.splitlines()
    [parent_row] = [n for n, line in enumerate(runs) if f"│ {parent.run_id} " in line]
    assert f"│   {child_id} " in runs[parent_row + 1]  # the child right under its parent, indented
    shown = (await run_cli(db, "trace", "show", parent.run_id, real=True)).stdout.split("\ninput tokens by part")[0]
    shown = shown.splitlines()  # the step table (where the tokens went follows it)
    assert shown[0].startswith('step 1 | delegate({"task": "Refund one item of order A123"}) | ')
    assert shown[1] == f"  sub-agent {child_id}: Refund one item of order A123"
    assert shown[2].startswith('  step 1 | get_order({"order_id": "A123"}) | ')
    nested = [line for line in shown if line.startswith("  ")]
    assert len(nested) == 1 + sum(max(1, len(s.tool_calls)) for s in child.steps) + 1  # heading, steps, exit
    assert shown[-1].startswith("-> done, final_answer")

    for run_id in (parent.run_id, child_id):  # each replays on its own from its record
        replayed = await run_cli(db, "replay", run_id, real=True)
        assert f"{run_id}: identical" in replayed.stdout, replayed.stdout + replayed.stderr


async def test_a_parent_killed_while_its_sub_agent_runs_resumes_that_same_child(db: str, tmp_path: Path) -> None:
    tools_db, gate = setup_dirs(tmp_path)
    env = {"DURABLE_DELEGATE": "1", "DURABLE_HANG_STEP": "2"}  # the child's second model call hangs
    proc = spawn_run(db, "run_parent_kill", tools_db, gate, env=env)
    await await_until(anyio.Path(gate / "model_started").exists, "the sub-agent's second model call", proc=proc)
    kill9(proc)

    parent = await load(db, "run_parent_kill")
    [sent] = parent.pending
    assert (parent.status, sent.call.name, sent.state) == ("running", "delegate", "sent")
    child_id = child_run_id(parent.run_id, sent.call.id)
    child = await load(db, child_id)
    assert child.status == "running" and len(child.steps) == 1
    assert rows(tools_db, "SELECT COUNT(*) FROM notes") == [(1,)]

    done = await run_cli(db, "resume", "run_parent_kill")  # the driver's CLI: it knows the test's script
    assert done.returncode == 0 and "run_parent_kill: done (final_answer)" in done.stdout, done.stderr
    child, parent = await load(db, child_id), await load(db, "run_parent_kill")
    assert (child.status, len(child.steps)) == ("done", 2)  # resumed where it stopped, not started again
    assert parent.final_answer == f"sub-agent: {child.final_answer}"
    assert rows(tools_db, "SELECT COUNT(*) FROM notes") == [(1,)]  # no tool ran twice
    assert rows(tools_db, "SELECT COUNT(*) FROM refunds") == [(1,)]
