"""Scenario 2 of issue 38 in network namespaces: a worker (namespace w1) is cut from the tool-server replica it calls
over Streamable HTTP (`toolwire serve --http`, namespace w2, on a link of their own) while a note (not idempotent) and
a refund (idempotent, by key) are both in flight, their effects already written by the tools. Three cuts: the link's
connections reset (the replica still reachable: the refund is sent again and answered), a fast cut (unreachable, the
connections aborted; the refund's second send cannot leave the worker) healed after the calls ended, and a silent one
(packets vanish) healed while the calls still wait. Checked from the tools' own
records and the run store: the run ends once; the note was run once and never sent again (an error that says its
outcome is unknown, or its answer); the refund was written once, whatever was sent again, and every re-send carried
the first send's key."""

import sys
from pathlib import Path

import httpx2
import pytest
from fleet_procs import Worker, start_worker, started
from test_fleet_replay import submit_refund_and_note

from cluster.netns import Cluster
from helpers.polling import await_until, wait_until
from helpers.servers import REPO
from store.procs import DRIVER, rows
from toolwire_client.config import ServerSpec
from toolwire_client.store import SqlRunStore

pytestmark = [pytest.mark.postgres, pytest.mark.alone, pytest.mark.timeout(240)]

PORT = 8000
"""The replica's port in its own namespace."""


WORKERS = 2  # w1: the worker; w2: the tool-server replica
"""How many worker namespaces the cluster fixture (conftest.py) makes."""


def answers(socket: Path) -> bool:
    try:
        with httpx2.Client(transport=httpx2.HTTPTransport(uds=str(socket)), timeout=2) as http:
            return http.get(f"http://127.0.0.1:{PORT}/healthz").status_code == 200
    except httpx2.TransportError:
        return False


@pytest.mark.parametrize("cut", ["reset", "fast", "silent"])
async def test_a_worker_cut_from_its_tool_server_replica_mid_call(
    cluster: Cluster, store: SqlRunStore, tmp_path: Path, cut: str
) -> None:
    gate, tools_db = tmp_path / "gate", tmp_path / "tools.sqlite3"
    gate.mkdir()
    for tool in ("send_note", "refund"):
        (gate / f"hold_{tool}").touch()  # each writes its effect, then holds before it answers
    replica_address = cluster.join(1, 2)
    log = tmp_path / "replica.log"
    env = {"DURABLE_TEST_DB": str(tools_db), "DURABLE_GATE_DIR": str(gate)}
    serve = [sys.executable, "-m", "toolwire_server", str(REPO / "tests/store/durable_tools.py") + ":registry"]
    replica = cluster.start(2, [*serve, "--http", "--host", "0.0.0.0", "--port", str(PORT)], log, env)
    socket = cluster.bridge(2, PORT)
    wait_until(lambda: answers(socket), "the replica to answer", timeout_s=60, interval_s=0.1, proc=replica, log=log)

    server = ServerSpec(name="durable", url=f"http://{replica_address}:{PORT}/mcp")
    worker_env = {"DURABLE_GATE_DIR": str(gate), "TOOLWIRE_DEBUG": "1"}
    command = (*cluster.in_worker(1), sys.executable, DRIVER, "cli")
    worker_log = tmp_path / "worker.log"
    driver: Worker = start_worker(
        cluster.worker_url(1), worker_log, concurrency=1, command=command, env_extra=worker_env, servers=[server]
    )
    try:
        wait_until(lambda: started(driver), "the worker to take runs", timeout_s=60, interval_s=0.1)
        run_id = await submit_refund_and_note(store, cluster.url, tools_db, gate)
        for tool in ("send_note", "refund"):
            wait_until((gate / f"{tool}_started").exists, f"{tool} in flight", timeout_s=60, interval_s=0.05)
        if cut == "reset":
            cluster.reset_join(1, 2)
        else:
            cluster.cut_join(1, 2, silent=cut == "silent")
        if cut == "fast":  # the calls end at once (the re-sent refund cannot reach the replica), then it heals
            await await_until(lambda: _ended(store, run_id), "the run to end while cut", timeout_s=60, interval_s=0.1)
        (gate / "release").touch()  # the held calls answer: into the void, or (silent) once the link is back
        cluster.heal_join(1, 2)
        await await_until(lambda: _ended(store, run_id), "the run to end", timeout_s=90, interval_s=0.1)
    finally:
        driver.stop()
    logs = worker_log.read_text() + log.read_text()
    state = await store.load(run_id)
    assert (state.status, state.stop_reason) == ("done", "final_answer"), logs
    assert rows(tools_db, "SELECT COUNT(*) FROM notes") == [(1,)]  # not idempotent: written once
    assert rows(tools_db, "SELECT COUNT(*) FROM calls WHERE tool = 'send_note'") == [(1,)], logs  # and sent once
    assert rows(tools_db, "SELECT COUNT(*) FROM refunds") == [(1,)]  # idempotent: its key wrote it once
    keys = rows(tools_db, "SELECT idempotency_key FROM calls WHERE tool = 'refund'")
    assert len(keys) in (1, 2) and len({k for (k,) in keys}) == 1 and keys[0][0], keys  # every send, one key
    results = {r.call_id: r for step in state.steps for r in step.results}
    note, refund = results["call_note"], results["call_refund"]
    print(f"\n{cut}: refund sent {len(keys)}x; note {note.error_kind or 'ok'}, refund {refund.error_kind or 'ok'}")
    if cut == "silent":  # the link came back before anything timed out: both answers arrived, nothing sent again
        assert (note.error_kind, refund.error_kind, len(keys)) == (None, None, 1), logs
    else:  # the note's outcome is unknown to the model (it says so), and it was not sent again
        assert note.error_kind == "transport" and "not sent again" in note.content, note
    if cut == "reset":  # the replica was reachable: the refund sent again with its key got the first receipt
        assert len(keys) == 2 and refund.error_kind is None and "true" in refund.content.lower(), (refund, logs)
    if cut == "fast":  # sent again with its key, which could not reach the replica: the model is told both
        assert refund.error_kind == "transport" and "sent again with the same idempotency key" in refund.content


async def _ended(store: SqlRunStore, run_id: str) -> bool:
    return (await store.load(run_id)).status not in ("running", "waiting_for_approval")
