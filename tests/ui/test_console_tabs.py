"""The console with many tabs open in one browser (issue 33 §7): a browser keeps at most 6 connections to one host,
and a live stream per tab held one each, so a seventh tab never loaded and a decision made in any tab was never
sent. The tabs now share one stream (static/live-worker.js): with 8 tabs open, each loads, a decision made in one is
recorded, and another tab shows it live. Debian's chromium driven by playwright, against `toolwire ui` in its own
process: without a login, and with a person logged in (the shared stream carries the session's cookie)."""

from collections.abc import Iterator
from contextlib import ExitStack
from functools import partial
from typing import Any

import pytest
from console import CHROMIUM, NO_CHROMIUM, console, decided, in_thread, people_file, waiting_run

from toolwire_client.store.approvals import default_approver

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
TABS = 8
WAIT_MS = 30_000
"""The bound on any one wait for a page (a seventh tab on one stream per tab never loads: the test fails there)."""
TOKEN = "tok-alice-0123456789"


BOB = "tok-bob-0123456789"
PEOPLE = {"alice": (TOKEN, ["*"], ["*"]), "bob": (BOB, ["billing"], ["*"])}


@pytest.fixture(scope="module")
def consoles(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[str, str]]]:
    """Three consoles, each on its own store with one refund run waiting, started before the browser (the store, the
    url): without a login; with alice's login; with alice's and bob's (bob sees only agent billing's runs)."""
    with ExitStack() as stack:
        started = {}
        for name in ("no login", "alice logs in", "two people"):
            folder = tmp_path_factory.mktemp("tabs")
            db = str(folder / "runs.db")
            args = ["--tokens", str(people_file(folder, PEOPLE))] if name != "no login" else []
            waiting = "run_first" if name == "two people" else "run_tabs"
            url = stack.enter_context(console(db, folder, *args, meanwhile=partial(waiting_run, db, waiting)))
            started[name] = (db, url)
        yield started


@pytest.mark.parametrize("who", ["no login", "alice logs in"])
def test_eight_tabs_load_and_a_decision_in_one_is_recorded(
    consoles: dict[str, tuple[str, str]], browser: Any, who: str
) -> None:
    db, url = consoles[who]
    tabs = browser.new_context()  # one browser profile: its tabs share the 6 connections to the console
    try:
        first = tabs.new_page()
        first.goto(url + "/")
        if who == "alice logs in":
            first.fill("input[name=name]", "alice")
            first.fill("input[name=token]", TOKEN)
            first.click("button")
            first.wait_for_url(url + "/")
        opened = [first]
        for n in range(1, TABS):
            page = tabs.new_page()
            page.goto(url + ["/", "/decisions", "/runs/run_tabs"][n % 3], timeout=WAIT_MS)
            opened.append(page)
        watcher = opened[2]  # on /runs/run_tabs: the decision shows up there live
        assert watcher.locator("form.decision").count() == 1

        deciding = opened[-1]
        deciding.goto(url + "/decisions", timeout=WAIT_MS)
        card = deciding.locator('form.decision[data-run="run_tabs"][data-call="call_1"]')
        card.locator("button.approve").click(timeout=WAIT_MS)
        deciding.wait_for_url(url + "/decisions", timeout=WAIT_MS)
        assert "approved issue_refund" in deciding.locator(".flash").inner_text()
        by = "alice" if who == "alice logs in" else default_approver()
        assert in_thread(decided, db, "run_tabs") == [("approve", by)]
        watcher.locator("form.decision").wait_for(state="detached", timeout=WAIT_MS)  # sent by the shared stream
    finally:
        tabs.close()


def test_a_tab_of_another_person_gets_only_their_runs(consoles: dict[str, tuple[str, str]], browser: Any) -> None:
    """Alice has a tab open; bob logs in in another tab of the same browser (the cookie is now his, alice's session
    still open). The tabs share one stream: it must start again as bob, so bob's tab is never sent alice's runs."""
    db, url = consoles["two people"]
    tabs = browser.new_context()
    try:
        alices, bobs = tabs.new_page(), tabs.new_page()
        for page, name in ((alices, "alice"), (bobs, "bob")):
            page.goto(url + "/login")
            page.fill("input[name=name]", name)
            page.fill("input[name=token]", PEOPLE[name][0])
            page.click("button")
            page.wait_for_url(url + "/")
            assert page.locator('#runs tr[data-run="run_first"]').count() == (name == "alice")
        in_thread(waiting_run, db, "run_support_later", "support-bot")
        in_thread(waiting_run, db, "run_billing_later", "billing")
        bobs.locator('#runs tr[data-run="run_billing_later"]').wait_for(timeout=WAIT_MS)  # sent live
        assert bobs.locator('#runs tr[data-run="run_support_later"]').count() == 0
        assert bobs.locator('#runs tr[data-run="run_first"]').count() == 0
    finally:
        tabs.close()
