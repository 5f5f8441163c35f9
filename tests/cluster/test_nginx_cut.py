"""Scenario 5 of issue 38: nginx (the shipped deploy/nginx.conf) between a worker and three tool-server replicas
(the durable tools, one effects database) cuts a Streamable HTTP response while a note (not idempotent) and a refund
(idempotent, by key) are in flight, their effects already written: the replica serving each dies (kill -9), or
nginx gives up reading it (`proxy_read_timeout` cut to 2 s against the held calls). Checked from the tools' own
records and the run store: the run ends once; nginx sent nothing twice on its own (a POST is never passed to a second
replica once sent); the note ran once and its result says its outcome is unknown; the refund was written once, and
each send of it carried the same key."""

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from fleet_procs import Worker, start_worker, started
from test_fleet_replay import submit_refund_and_note

from helpers.nginx import NGINX, Nginx, deploy_site
from helpers.polling import await_until, wait_until
from helpers.servers import HttpServer, free_port
from store.procs import DRIVER, rows
from toolwire_client.config import ServerSpec
from toolwire_client.store import open_store

pytestmark = [
    pytest.mark.nginx,
    pytest.mark.alone,
    pytest.mark.timeout(240),
    pytest.mark.skipif(NGINX is None, reason="no nginx binary (Debian: apt-get install nginx)"),
]
TOOLS = "tests/store/durable_tools.py:registry"
READ_TIMEOUT = "proxy_read_timeout 1h;"


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    with ExitStack() as made:
        yield made


@pytest.mark.parametrize("cut", ["replica-killed", "nginx-read-timeout"])
async def test_nginx_cuts_a_response_mid_call(stack: ExitStack, tmp_path: Path, cut: str) -> None:
    gate, tools_db, db = tmp_path / "gate", tmp_path / "tools.sqlite3", str(tmp_path / "runs.db")
    gate.mkdir()
    for tool in ("send_note", "refund"):
        (gate / f"hold_{tool}").touch()  # each writes its effect, then holds before it answers
    env = {"DURABLE_TEST_DB": str(tools_db), "DURABLE_GATE_DIR": str(gate)}
    replicas = [stack.enter_context(HttpServer(TOOLS, "--replica", f"r{n}", env=env)) for n in (1, 2, 3)]
    port = free_port()
    site = deploy_site([r.port for r in replicas], port)
    assert READ_TIMEOUT in site
    if cut == "nginx-read-timeout":
        site = site.replace(READ_TIMEOUT, "proxy_read_timeout 2s;")
    nginx = stack.enter_context(Nginx(site, tmp_path / "nginx", port))

    server = ServerSpec(name="durable", url=nginx.base + "/mcp")
    worker_log = tmp_path / "worker.log"
    command = (sys.executable, DRIVER, "cli")
    worker_env = {"DURABLE_GATE_DIR": str(gate), "TOOLWIRE_DEBUG": "1"}
    worker: Worker = start_worker(db, worker_log, 1, command=command, env_extra=worker_env, servers=[server])
    stack.callback(worker.stop)
    store = await open_store(db)
    try:
        wait_until(lambda: started(worker), "the worker to take runs", timeout_s=60, interval_s=0.1)
        run_id = await submit_refund_and_note(store, db, tools_db, gate)
        for tool in ("send_note", "refund"):
            wait_until((gate / f"{tool}_started").exists, f"{tool} in flight", timeout_s=60, interval_s=0.05)
        if cut == "replica-killed":
            for tool in ("send_note", "refund"):
                os.kill(int((gate / f"{tool}_started").read_text()), signal.SIGKILL)

        async def ended() -> bool:
            return (await store.load(run_id)).status not in ("running", "waiting_for_approval")

        await await_until(ended, "the run to end", timeout_s=90, interval_s=0.1)
        (gate / "release").touch()  # the calls still held (nginx gave up on them) end
        state = await store.load(run_id)
    finally:
        await store.aclose()
    logs = worker_log.read_text() + nginx.access_log()
    assert (state.status, state.stop_reason) == ("done", "final_answer"), logs
    assert rows(tools_db, "SELECT COUNT(*) FROM notes") == [(1,)]  # not idempotent: written once
    assert rows(tools_db, "SELECT COUNT(*) FROM calls WHERE tool = 'send_note'") == [(1,)], logs  # and sent once
    assert rows(tools_db, "SELECT COUNT(*) FROM refunds") == [(1,)]  # idempotent: its key wrote it once
    keys = rows(tools_db, "SELECT idempotency_key FROM calls WHERE tool = 'refund'")
    assert len({k for (k,) in keys}) == 1 and keys[0][0], keys  # every send, one key
    results = {r.call_id: r for step in state.steps for r in step.results}
    note, refund = results["call_note"], results["call_refund"]
    print(f"\n{cut}: refund sent {len(keys)}x; note {note.error_kind or 'ok'}, refund {refund.error_kind or 'ok'}")
    # Before, the SDK's stand-in for nginx's 502/504 was read as the tool's own failure ("send_note failed: Server
    # returned an error response": the model may send it again) and the refund was not sent again with its key.
    assert note.error_kind == "transport" and "not sent again" in note.content, note
    assert len(keys) == 2 and refund.error_kind is None and '"repeated": true' in refund.content, refund
