"""Scenario 1 of issue 38 in network namespaces: worker 1 is cut from PostgreSQL while its tool calls are on the wire
(a non-idempotent note held open, an idempotent refund), worker 2 is started and takes the run over once worker 1's
lease has run out, and the link heals before or after that takeover, by a silent cut (packets vanish) or a
fast-failing one. Checked from the records: the run ends once, the note was written once and the refund once (its
key), the note's result in the model's history is either worker 1's own saved one or "outcome unknown" with worker
1's real outcome on record as a late outcome, and neither worker failed the run."""

import sys
import time
from pathlib import Path

import pytest
from fleet_procs import FAST_TAKEOVER, Worker, start_worker, started
from test_fleet_replay import durable_server, submit_refund_and_note

from cluster.netns import Cluster
from helpers.polling import await_until, wait_until
from store.procs import DRIVER, kill_pid_in, rows
from toolwire_client.store import SqlRunStore
from toolwire_client.store.events import late_recorded

pytestmark = [pytest.mark.postgres, pytest.mark.alone, pytest.mark.timeout(240)]

LEASE_S = 6
"""Short leases, so a takeover comes seconds after a cut (a worker gives up at half of it)."""


WORKERS = 2
"""How many worker namespaces the cluster fixture (conftest.py) makes."""


def worker(cluster: Cluster, n: int, tmp: Path, gate: Path, tools_db: Path) -> Worker:
    env = {
        **FAST_TAKEOVER,
        "TOOLWIRE_LEASE_S": str(LEASE_S),
        "TOOLWIRE_DB_CONNECT_TIMEOUT_S": "2",
        "TOOLWIRE_DB_UNACKED_TIMEOUT_S": "2",
        "DURABLE_GATE_DIR": str(gate),
        "TOOLWIRE_DEBUG": "1",  # a worker that fails shows where
    }
    return start_worker(
        cluster.worker_url(n), tmp / f"worker-{n}.log", concurrency=1,
        command=(*cluster.in_worker(n), sys.executable, DRIVER, "cli"), env_extra=env,
        servers=[durable_server(tools_db, gate)],
    )  # fmt: skip


async def holder(store: SqlRunStore, run_id: str) -> str | None:
    return next((s.claimed_by for s in await store.list_runs(limit=5) if s.run_id == run_id), None)


@pytest.mark.parametrize(
    ("silent", "heal"),
    [(True, "after"), (False, "after"), (True, "before")],
    ids=["silent-cut-healed-after-takeover", "fast-cut-healed-after-takeover", "silent-cut-healed-before-takeover"],
)
async def test_a_worker_cut_from_postgresql_mid_call(
    cluster: Cluster, store: SqlRunStore, tmp_path: Path, silent: bool, heal: str
) -> None:
    gate, tools_db = tmp_path / "gate", tmp_path / "tools.sqlite3"
    gate.mkdir()
    (gate / "hold_send_note").touch()  # the note is written, then holds before it answers
    first = worker(cluster, 1, tmp_path, gate, tools_db)
    second: Worker | None = None
    try:
        wait_until(lambda: started(first), "worker 1 to take runs", timeout_s=60, interval_s=0.1)
        run_id = await submit_refund_and_note(store, cluster.url, tools_db, gate)
        wait_until((gate / "send_note_started").exists, "the note in flight", timeout_s=60, interval_s=0.05)
        owner = await holder(store, run_id)
        assert owner is not None

        cluster.cut(1, silent=silent)
        cut_at = time.monotonic()
        second = worker(cluster, 2, tmp_path, gate, tools_db)
        if heal == "before":
            (gate / "release").touch()  # the note answers worker 1, which cannot save it
            cluster.heal(1)
        else:
            await await_until(
                lambda: _taken(store, run_id, owner), "worker 2 to take the run", timeout_s=90, interval_s=0.1
            )
            took = time.monotonic() - cut_at
            print(f"\n{'silent' if silent else 'fast'} cut: run taken over {took:.1f} s after it (lease {LEASE_S} s)")
            (gate / "release").touch()  # the note answers worker 1 now, after it lost the run
            cluster.heal(1)

        async def ended() -> bool:
            return (await store.load(run_id)).status not in ("running", "waiting_for_approval")

        await await_until(ended, "the run to end", timeout_s=120, interval_s=0.2)
        if heal == "after":  # worker 1 is back: it says it lost the run and puts the note's outcome on record
            await await_until(lambda: _late_of(store, run_id), "worker 1's late outcome", timeout_s=60, interval_s=0.2)
    finally:
        for w in (first, second):
            if w is not None:
                w.stop()
        kill_pid_in(gate / "send_note_started")
    logs = (tmp_path / "worker-1.log").read_text() + (tmp_path / "worker-2.log").read_text()
    state = await store.load(run_id)
    assert (state.status, state.stop_reason) == ("done", "final_answer"), logs
    assert rows(tools_db, "SELECT COUNT(*) FROM notes") == [(1,)]  # not idempotent: never sent twice
    assert rows(tools_db, "SELECT COUNT(*) FROM refunds") == [(1,)]  # idempotent: its key wrote it once
    assert "could not be driven" not in logs and "worker_error" not in logs
    note = next(r for step in state.steps for r in step.results if r.call_id == "call_note")
    if note.error_kind == "outcome_unknown":  # worker 2 answered it: worker 1's real outcome is on record
        assert "call_note" in await _late_of(store, run_id), logs
        assert f"lost run {run_id} to another worker" in logs


async def _taken(store: SqlRunStore, run_id: str, first_owner: str) -> bool:
    """Worker 2 holds the run, or has held it already (a scripted run ends in milliseconds once taken)."""
    now = next(s for s in await store.list_runs(limit=5) if s.run_id == run_id)
    return now.claimed_by not in (first_owner, None) or now.status != "running"


async def _late_of(store: SqlRunStore, run_id: str) -> set[str]:
    return {o.call_id for o in await late_recorded(store, run_id)}
