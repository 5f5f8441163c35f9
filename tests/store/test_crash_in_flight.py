"""kill -9 while tool calls are in flight, then resume: the non-idempotent call is not sent again (the model is told its
outcome is unknown); the idempotent one is resent with the same key and the server answers with the first result.
Side effects are counted in the tools' own database."""

import json
from pathlib import Path

import anyio
from procs import kill9, kill_pid_in, load, rows, run_cli, setup_dirs, spawn_run

from helpers.polling import await_until
from toolwire_client import texts
from toolwire_client.tools.toolbox import idempotency_key


async def test_kill_while_tool_calls_are_in_flight_then_resume(db: str, tmp_path: Path) -> None:
    tools_db, gate = setup_dirs(tmp_path)
    (gate / "hold_send_note").touch()
    (gate / "hold_refund").touch()
    proc = spawn_run(db, "run_flight_kill", tools_db, gate)

    async def both() -> bool:
        return (
            await anyio.Path(gate / "send_note_started").exists() and await anyio.Path(gate / "refund_started").exists()
        )

    await await_until(both, "both calls in flight", proc=proc)
    kill9(proc)
    kill_pid_in(gate / "refund_started")  # the orphaned stdio server of the killed run

    crashed = await load(db, "run_flight_kill")
    assert crashed.status == "running"
    assert sorted((p.call.name, p.state, p.idempotent) for p in crashed.pending) == [
        ("refund", "sent", True),
        ("send_note", "sent", False),
    ]
    assert rows(tools_db, "SELECT COUNT(*) FROM notes") == [(1,)]  # both writes happened, their answers were lost
    assert rows(tools_db, "SELECT COUNT(*) FROM refunds") == [(1,)]

    (gate / "hold_send_note").unlink()
    (gate / "hold_refund").unlink()
    done = await run_cli(db, "resume", "run_flight_kill")
    assert done.returncode == 0, done.stderr
    final = await load(db, "run_flight_kill")
    assert (final.status, final.stop_reason) == ("done", "final_answer")
    note, refund = final.steps[0].results
    assert (note.error_kind, note.content) == ("outcome_unknown", texts.outcome_unknown("send_note"))
    assert json.loads(refund.content) == {"order_id": "A123", "amount_cents": 500, "repeated": True}
    assert rows(tools_db, "SELECT COUNT(*) FROM notes") == [(1,)]  # not sent again
    key = idempotency_key("run_flight_kill", "call_refund")
    assert rows(tools_db, "SELECT idempotency_key FROM refunds") == [(key,)]
    assert final.final_answer is not None and "outcome of this send_note call is unknown" in final.final_answer
