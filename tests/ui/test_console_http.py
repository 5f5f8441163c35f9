"""The run console's guards over plain HTTP, against `toolwire ui --tokens` in its own process: a page needs a
login; a forged cross-site POST, a POST without the session's CSRF token or without an Origin, a foreign Host are
refused and record nothing (for an answer to a tool's question too, and an answer that does not fit its schema);
a decision is recorded under the person's name; a forged session cookie (a page's public viewer name, a guess)
opens nothing, and no path of the static mount reaches a file outside ui/static; bound beyond loopback without a
tokens file, the console does not start."""

import http.client
import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import httpx2
import pytest
from click.testing import CliRunner
from console import answered, console, decided, form_of, people_file, question_run, waiting_run

from toolwire_client.cli import main

TOKEN = "tok-alice-0123456789"


@pytest.fixture(scope="module")
def logged_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, httpx2.Client]]:
    """One console with a tokens file, two runs waiting; a client that logged in as alice (the store, the url)."""
    folder = tmp_path_factory.mktemp("ui-http")
    db = str(folder / "runs.db")
    tokens = people_file(folder, {"alice": (TOKEN, ["*"], ["*"])})

    def two_runs() -> None:
        waiting_run(db, "run_forged")
        waiting_run(db, "run_login")
        question_run(db, "run_question")
        question_run(db, "run_url", url="https://login.example.com/bank")

    with (
        console(db, folder, "--tokens", str(tokens), meanwhile=two_runs) as url,
        httpx2.Client(base_url=url, timeout=30) as browser,
    ):
        assert browser.get("/").headers["location"] == "/login"
        assert browser.get("/runs/no_such_run").headers["location"] == "/login"  # not even a 404 before a login
        assert browser.get("/events?watch=/").status_code == 401
        wrong = browser.post("/login", data={"name": "alice", "token": "tok-mallory"}, headers={"origin": url})
        assert wrong.status_code == 401 and "that name and token are not a person" in wrong.text
        login = {"name": "alice", "token": TOKEN}
        assert browser.post("/login", data=login, headers={"origin": url}).status_code == 303
        yield db, url, browser


def test_forged_posts_are_refused_and_record_nothing(logged_in: tuple[str, str, httpx2.Client]) -> None:
    db, url, browser = logged_in
    page = browser.get("/runs/run_forged")
    assert page.status_code == 200 and "issue_refund" in page.text
    form = {**form_of(page.text), "decision": "approve"}
    action = "/runs/run_forged/calls/call_1/decide"
    own = {"origin": url}

    cross_site = browser.post(action, data=form, headers={"origin": "http://evil.example"})
    assert cross_site.status_code == 403 and "evil.example" in cross_site.text
    no_token = browser.post(action, data={**form, "csrf": "guessed"}, headers=own)
    assert no_token.status_code == 403 and "forged token" in no_token.text
    with httpx2.Client(base_url=url, timeout=30) as stranger:  # another visitor, not logged in: no session
        assert stranger.post(action, data=form, headers=own).status_code == 403
    assert browser.post(action, data=form).status_code == 403  # no Origin at all
    assert browser.get("/runs/run_forged", headers={"host": "attacker.example"}).status_code == 421
    unclear = browser.post(action, data={**form, "decision": "maybe"}, headers=own)
    assert unclear.status_code == 400 and "approve or reject" in unclear.text
    too_long = browser.post(action, data={**form, "decision": "reject", "reason": "x" * 2001}, headers=own)
    assert too_long.status_code == 400
    assert decided(db, "run_forged") == []

    elsewhere = {**form, "next": "//evil.example/after"}  # sent back to a page of the console, never another site
    made = browser.post(action, data=elsewhere, headers=own)
    assert made.status_code == 303 and made.headers["location"] == "/"
    assert decided(db, "run_forged") == [("approve", "alice")]
    twice = browser.post(action, data=form, headers=own)
    assert twice.status_code == 409 and "already decided" in twice.text


def test_forged_or_misfit_answers_are_refused_and_record_nothing(logged_in: tuple[str, str, httpx2.Client]) -> None:
    db, url, browser = logged_in
    page = browser.get("/runs/run_question")
    assert "Who is it for?" in page.text and 'name="f.party"' in page.text
    form = {**form_of(page.text), "action": "accept", "f.name": "Ada", "f.party": "2"}
    action, own = "/runs/run_question/requests/call_book/answer", {"origin": url}

    assert browser.post(action, data=form, headers={"origin": "http://evil.example"}).status_code == 403
    assert browser.post(action, data={**form, "csrf": "guessed"}, headers=own).status_code == 403
    assert browser.post(action, data=form).status_code == 403  # no Origin
    with httpx2.Client(base_url=url, timeout=30) as stranger:
        assert stranger.post(action, data=form, headers=own).status_code == 403
    unclear = browser.post(action, data={**form, "action": "maybe"}, headers=own)
    assert unclear.status_code == 400 and "accept, decline or cancel" in unclear.text
    assert browser.post(action, data={**form, "f.name": "x" * 64_001}, headers=own).status_code == 400
    misfit = browser.post(action, data={**form, "f.party": "2.5"}, headers=own)
    assert misfit.status_code == 400 and "'party': '2.5' is not an integer" in unescape(misfit.text)
    assert 'name="f.name" value="Ada"' in misfit.text  # the form again, as it was filled
    assert answered(db, "run_question") == []

    made = browser.post(action, data=form, headers=own)
    assert made.status_code == 303 and made.headers["location"] == "/runs/run_question"
    assert answered(db, "run_question") == [("accept", '{"name": "Ada", "party": 2}', "alice")]
    twice = browser.post(action, data={**form, "action": "decline"}, headers=own)
    assert twice.status_code == 409 and "already answered (accept, by alice)" in twice.text


def test_a_url_question_is_accepted_after_going_there(logged_in: tuple[str, str, httpx2.Client]) -> None:
    db, url, browser = logged_in
    page = browser.get("/runs/run_url")
    assert '<a href="https://login.example.com/bank" target="_blank" rel="noopener noreferrer"' in page.text
    assert "I went there / accept" in page.text
    form = {**form_of(page.text), "action": "accept", "f.sneaked": "in"}  # fields are not read for a URL question
    made = browser.post("/runs/run_url/requests/call_book/answer", data=form, headers={"origin": url})
    assert made.status_code == 303
    assert answered(db, "run_url") == [("accept", None, "alice")]


def test_a_logged_in_person_decides_under_their_name(logged_in: tuple[str, str, httpx2.Client]) -> None:
    db, url, browser = logged_in
    page = browser.get("/runs/run_login")
    assert "deciding as alice" in page.text and TOKEN not in page.text
    form = {**form_of(page.text), "decision": "reject", "reason": "not this one"}
    made = browser.post("/runs/run_login/calls/call_1/decide", data=form, headers={"origin": url})
    assert made.status_code == 303 and made.headers["location"] == "/runs/run_login"
    assert decided(db, "run_login") == [("reject", "alice")]
    assert "rejected issue_refund (call call_1) of run run_login as alice" in browser.get("/runs/run_login").text


def test_a_forged_session_cookie_opens_nothing(logged_in: tuple[str, str, httpx2.Client]) -> None:
    db, url, browser = logged_in
    page = browser.get("/runs/run_forged").text
    viewer = re.search(r'data-viewer="([^"]+)"', page)
    assert viewer is not None  # alice's session's public name: on every page, never a session id
    form, before = {**form_of(page), "decision": "approve"}, decided(db, "run_forged")
    for forged in (viewer.group(1), "guessed-session-id", ""):
        with httpx2.Client(base_url=url, timeout=30, cookies={"toolwire_ui_session": forged}) as stranger:
            assert stranger.get("/runs/run_forged").headers["location"] == "/login"
            assert stranger.get("/events", params={"watch": "/runs/run_forged"}).status_code == 401
            made = stranger.post("/runs/run_forged/calls/call_1/decide", data=form, headers={"origin": url})
            assert made.status_code == 403 and "forged token" in made.text
    assert decided(db, "run_forged") == before


@pytest.mark.parametrize(
    "path",
    ["/static/../app.py", "/static/%2e%2e/app.py", "/static/..%2fapp.py", "/static/..%5capp.py", "/static//etc/passwd"],
)
def test_the_static_mount_serves_only_ui_static(logged_in: tuple[str, str, httpx2.Client], path: str) -> None:
    """Sent as written (http.client does not tidy a path, as a browser or httpx would)."""
    _, url, _ = logged_in
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request("GET", path)
        got = conn.getresponse()
        body = got.read().decode(errors="replace")
    finally:
        conn.close()
    assert got.status == 404 and "def " not in body and "root:" not in body


def test_bound_beyond_loopback_without_tokens_it_does_not_start(tmp_path: Path) -> None:
    done = CliRunner().invoke(main, ["ui", "--db", str(tmp_path / "runs.db"), "--host", "0.0.0.0"])
    assert done.exit_code == 2
    assert "needs a login: give --tokens FILE" in done.output and "Traceback" not in done.output
