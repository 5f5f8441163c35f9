"""The console decides only for people allowed to decide, against `toolwire ui --tokens` in its own process (issue 33
§5): an agent's tool token does not log in; a person sees and decides only the runs of their agents and the calls of
their tools (by URL too: a run of another agent reads as no such run, and a forged decision records nothing); failed
logins are throttled per client and per account, so one client's flood never keeps another client's correct login
out; a tokens file with no people does not start the console, saying why in one line."""

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest
from console import answered, console, decided, form_of, people_file, question_run, waiting_run

from helpers.cli import run_toolwire
from helpers.polling import wait_until
from helpers.servers import free_port, tokens_file

AGENT_TOKEN = "tok-support-agent-get-order-only"
PEOPLE = {
    "alice": ("tok-alice-0123456789", ["support*"], ["*"]),
    "bob": ("tok-bob-0123456789", ["billing"], ["*"]),
    "carol": ("tok-carol-0123456789", ["*"], ["get_*"]),
    "dave": ("tok-dave-0123456789", ["*"], ["*"]),
}


@pytest.fixture(scope="module")
def people_console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """One console whose tokens file has the support agent's tool token and three people; a refund run of agent
    support-bot and one of agent billing, and a question run of support-bot (the store, the url)."""
    folder = tmp_path_factory.mktemp("ui-people")
    db = str(folder / "runs.db")
    tokens = people_file(folder, PEOPLE, agents={"support-bot": AGENT_TOKEN})

    def runs() -> None:
        waiting_run(db, "run_support", agent="support-bot")
        waiting_run(db, "run_billing", agent="billing")
        question_run(db, "run_question", agent="support-bot")

    with console(db, folder, "--tokens", str(tokens), meanwhile=runs) as url:
        yield db, url


def client_at(url: str, address: str) -> httpx2.Client:
    """A client connecting from `address` (127.0.0.0/8 is all this machine): the throttle counts per address, and
    each test's clients have their own, so one test's failures are not another's."""
    return httpx2.Client(base_url=url, timeout=30, transport=httpx2.HTTPTransport(local_address=address))


@contextmanager
def logged_in(url: str, name: str) -> Iterator[httpx2.Client]:
    with client_at(url, "127.0.0.1") as client:
        made = client.post("/login", data={"name": name, "token": PEOPLE[name][0]}, headers={"origin": url})
        assert made.status_code == 303, made.text
        yield client


def test_an_agents_tool_token_does_not_log_in(people_console: tuple[str, str]) -> None:
    _, url = people_console
    with client_at(url, "127.0.0.3") as client:
        for name in ("support-bot", "alice"):
            made = client.post("/login", data={"name": name, "token": AGENT_TOKEN}, headers={"origin": url})
            assert made.status_code == 401 and "not a person of the console" in made.text
            assert client.get("/").headers["location"] == "/login"
        given = client.post("/login", data={"name": "bob", "token": PEOPLE["alice"][0]}, headers={"origin": url})
        assert given.status_code == 401  # alice's token under bob's name is no one


def test_a_person_reads_only_their_agents_runs(people_console: tuple[str, str]) -> None:
    _, url = people_console
    with logged_in(url, "bob") as bob:
        listed = bob.get("/").text
        assert 'data-run="run_billing"' in listed and "run_support" not in listed and "run_question" not in listed
        assert "run_support" not in bob.get("/decisions").text
        shown = bob.get("/runs/run_support")
        assert shown.status_code == 404 and "no run &#x27;run_support&#x27;" in shown.text
        with bob.stream("GET", "/events", params={"watch": ["/runs/run_support", "/decisions"]}) as stream:
            first = next(line for line in stream.iter_lines() if line.startswith("data: "))
        parts = json.loads(first.removeprefix("data: "))
        assert list(parts) == ["/decisions"] and "run_billing" in parts["/decisions"]["decide"]
        assert "run_support" not in first


def test_a_live_stream_ends_with_its_session(people_console: tuple[str, str]) -> None:
    """The tabs of a browser share one stream (static/live-worker.js): it must not go on sending one person's runs
    after they logged out (the browser then connects again, as whoever holds its cookie now)."""
    _, url = people_console
    ended = threading.Event()
    with logged_in(url, "bob") as bob:
        csrf = form_of(bob.get("/decisions").text)["csrf"]
        with (
            bob.stream("GET", "/events", params={"watch": "/decisions"}) as stream,
            ThreadPoolExecutor(1) as reader,
        ):
            lines = stream.iter_lines()
            assert "run_billing" in next(line for line in lines if line.startswith("data: "))  # it streams
            assert bob.post("/logout", data={"csrf": csrf}, headers={"origin": url}).status_code == 303
            reader.submit(lambda: (list(lines), ended.set()))
            wait_until(ended.is_set, "the live stream to end after its session logged out", timeout_s=30)


def test_a_person_decides_only_their_agents_runs_and_tools(people_console: tuple[str, str]) -> None:
    db, url = people_console
    with logged_in(url, "bob") as bob, logged_in(url, "carol") as carol, logged_in(url, "alice") as alice:
        csrf = form_of(bob.get("/runs/run_billing").text)["csrf"]
        forged = {"decision": "approve", "csrf": csrf, "next": "/"}
        made = bob.post("/runs/run_support/calls/call_1/decide", data=forged, headers={"origin": url})
        assert made.status_code == 404 and "no run &#x27;run_support&#x27;" in made.text
        answer = {"action": "decline", "csrf": csrf, "next": "/"}
        made = bob.post("/runs/run_question/requests/call_book/answer", data=answer, headers={"origin": url})
        assert made.status_code == 404
        assert decided(db, "run_support") == [] and answered(db, "run_question") == []

        shown = carol.get("/runs/run_support")  # carol sees every agent's runs, may decide only get_* tools
        page = shown.text
        assert shown.status_code == 200 and "/calls/call_1/decide" not in page
        forged = {"decision": "approve", "csrf": form_of(page)["csrf"], "next": "/"}
        made = carol.post("/runs/run_support/calls/call_1/decide", data=forged, headers={"origin": url})
        assert made.status_code == 403 and "carol may not decide call_1 of run run_support" in made.text
        assert decided(db, "run_support") == []

        form = form_of(alice.get("/runs/run_support").text)
        approve = {**form, "decision": "approve"}
        made = alice.post("/runs/run_support/calls/call_1/decide", data=approve, headers={"origin": url})
        assert made.status_code == 303
        assert decided(db, "run_support") == [("approve", "alice")]


def test_one_clients_flood_does_not_lock_another_out(people_console: tuple[str, str]) -> None:
    """Client 127.0.0.2 floods bad logins naming alice; alice, from another address, still logs in at the first
    try; the flooding client is refused unchecked (a correct token too, and that is not counted); a client that
    mistyped a few times then logs in."""
    _, url = people_console
    with (
        client_at(url, "127.0.0.2") as flooder,
        client_at(url, "127.0.0.4") as own,
        client_at(url, "127.0.0.5") as typist,
    ):
        statuses = [
            flooder.post("/login", data={"name": "alice", "token": f"guess-{n}"}, headers={"origin": url}).status_code
            for n in range(30)
        ]
        right = {"name": "alice", "token": PEOPLE["alice"][0]}
        assert own.post("/login", data=right, headers={"origin": url}).status_code == 303
        assert own.get("/").status_code == 200
        assert statuses[0] == 401 and set(statuses[10:]) == {429}  # ten failures at most, then none checked
        assert flooder.post("/login", data=right, headers={"origin": url}).status_code == 429
        for n in range(3):
            wrong = {"name": "dave", "token": f"typo-{n}"}
            assert typist.post("/login", data=wrong, headers={"origin": url}).status_code == 401
        right = {"name": "dave", "token": PEOPLE["dave"][0]}
        assert typist.post("/login", data=right, headers={"origin": url}).status_code == 303


def test_a_tokens_file_without_people_does_not_start_the_console(tmp_path: Path) -> None:
    agents_only = tokens_file(tmp_path, {"support": (AGENT_TOKEN, ["get_order"])})
    db = str(tmp_path / "runs.db")
    waiting_run(db, "run_1")  # a store to open: only the tokens file is wrong
    port = str(free_port())
    done = run_toolwire("ui", "--db", db, "--port", port, "--tokens", str(agents_only), timeout_s=60)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "names no people, and the console logs in only people" in done.stderr
