"""The run console's guards over plain HTTP, against `toolwire ui` in its own process: a forged cross-site POST, a
POST without the session's CSRF token or without an Origin, a foreign Host are refused and record nothing; with a
tokens file a page needs a login, and a decision is recorded under the token's agent; bound beyond loopback without
one, the console does not start."""

import re
from pathlib import Path

import anyio
import httpx2
from console import console

from helpers.cli import clean_env, run_toolwire
from helpers.servers import tokens_file
from toolwire_client.run.state import PendingCall, RunState, args_hash
from toolwire_client.store import open_store
from toolwire_client.store.approvals import default_approver
from toolwire_shared.messages import ToolCall

ARGS = {"order_id": "A123", "amount_cents": 2500}


def waiting_run(db: str, run_id: str) -> None:
    """A run saved as waiting on one refund (no model needed: only the decision is under test)."""
    call = ToolCall(id="call_1", name="issue_refund", arguments=ARGS)
    pending = PendingCall(call=call, state="pending_approval", args_hash=args_hash(ARGS))
    state = RunState(run_id=run_id, agent_name="agent", task="Refund A123", model="m", pending=[pending])
    state.status = "waiting_for_approval"

    async def save() -> None:
        store = await open_store(db)
        try:
            await store.save(state)
        finally:
            await store.aclose()

    anyio.run(save)


def decided(db: str, run_id: str) -> list[tuple[str, str | None]]:
    async def read() -> list[tuple[str, str | None]]:
        store = await open_store(db)
        try:
            return [(d.decision, d.decided_by) for d in await store.decisions(run_id)]
        finally:
            await store.aclose()

    return anyio.run(read)


def form_of(page: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="(csrf|hash|next)" value="([^"]*)"', page))


def test_forged_posts_are_refused_and_record_nothing(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    waiting_run(db, "run_forged")
    with console(db, tmp_path) as url, httpx2.Client(base_url=url, timeout=30) as browser:
        page = browser.get("/runs/run_forged")
        assert page.status_code == 200 and "issue_refund" in page.text
        form = {**form_of(page.text), "decision": "approve"}
        action = "/runs/run_forged/calls/call_1/decide"
        own = {"origin": url}

        cross_site = browser.post(action, data=form, headers={"origin": "http://evil.example"})
        assert cross_site.status_code == 403 and "evil.example" in cross_site.text
        no_token = browser.post(action, data={**form, "csrf": "guessed"}, headers=own)
        assert no_token.status_code == 403 and "forged token" in no_token.text
        with httpx2.Client(base_url=url, timeout=30) as stranger:  # another visitor: its own session, not ours
            assert stranger.post(action, data=form, headers=own).status_code == 403
        assert browser.post(action, data=form).status_code == 403  # no Origin at all
        rebound = browser.get("/runs/run_forged", headers={"host": "attacker.example"})
        assert rebound.status_code == 421
        assert decided(db, "run_forged") == []

        made = browser.post(action, data=form, headers=own)
        assert made.status_code == 303 and made.headers["location"] == "/runs/run_forged"
        assert decided(db, "run_forged") == [("approve", default_approver())]
        twice = browser.post(action, data=form, headers=own)
        assert twice.status_code == 409 and "already decided" in twice.text


def test_a_tokens_file_means_a_login_and_the_agent_decides(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    waiting_run(db, "run_login")
    tokens = tokens_file(tmp_path, {"alice": ("tok-alice-0123456789", ["*"])})
    with console(db, tmp_path, "--tokens", str(tokens)) as url, httpx2.Client(base_url=url, timeout=30) as browser:
        assert browser.get("/").headers["location"] == "/login"
        assert browser.get("/events/runs").status_code == 401
        own = {"origin": url}
        wrong = browser.post("/login", data={"token": "tok-mallory"}, headers=own)
        assert wrong.status_code == 401 and "that token is not in the" in wrong.text
        assert browser.post("/login", data={"token": "tok-alice-0123456789"}, headers=own).status_code == 303
        page = browser.get("/runs/run_login")
        assert "deciding as alice" in page.text and "tok-alice" not in page.text
        form = {**form_of(page.text), "decision": "reject", "reason": "not this one"}
        assert browser.post("/runs/run_login/calls/call_1/decide", data=form, headers=own).status_code == 303
        assert decided(db, "run_login") == [("reject", "alice")]


def test_bound_beyond_loopback_without_tokens_it_does_not_start(tmp_path: Path) -> None:
    done = run_toolwire("ui", "--db", str(tmp_path / "runs.db"), "--host", "0.0.0.0", env=clean_env(), timeout_s=60)
    assert done.returncode == 2
    assert "needs a login: give --tokens FILE" in done.stderr and "Traceback" not in done.stderr
