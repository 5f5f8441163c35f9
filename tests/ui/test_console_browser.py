"""The run console (`toolwire ui`) in a real browser: Debian's chromium, headless, driven by playwright, against
`toolwire ui` in its own process on a real SQLite store, with refund runs of the real support tools waiting for a
person. The screenshots in docs/ (ui-runs.png, ui-run.png, ui-decisions.png) are made here
(`TOOLWIRE_SCREENSHOTS=docs` writes them there)."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from console import CHROMIUM, NO_CHROMIUM, console, refunded_cents, waiting_runs

from toolwire_client.run.state import RunState
from toolwire_client.store.approvals import default_approver

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
WAIT_MS = 30_000
"""The bound on any one wait for the page (a run resumed by the console starts its tool server first)."""


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, list[RunState]]]:
    folder = tmp_path_factory.mktemp("ui")
    db, support_db = str(folder / "runs.db"), folder / "support.sqlite3"
    runs: list[RunState] = []
    tasks = ["Refund one item of order A123", "Refund one item of order B200"]
    with console(db, folder, meanwhile=lambda: runs.extend(waiting_runs(db, support_db, tasks))) as url:
        assert [r.status for r in runs] == ["waiting_for_approval"] * 2
        yield url, support_db, runs


def test_runs_list_says_who_each_run_waits_for(
    setup: tuple[str, Path, list[RunState]], browser: Any, shots: Path
) -> None:
    url, _, runs = setup
    page = browser.new_page(viewport={"width": 1400, "height": 500})
    page.goto(url + "/")
    for run in runs:
        row = page.locator(f'#runs tr[data-run="{run.run_id}"]')
        assert "waiting_for_approval" in row.inner_text() and "a person: issue_refund" in row.inner_text()
    page.screenshot(path=str(shots / "ui-runs.png"))
    page.goto(url + "/?q=B200")
    assert page.locator("#runs tr[data-run]").count() == 1
    page.close()


def test_approved_from_the_page_goes_on_to_done_live(
    setup: tuple[str, Path, list[RunState]], browser: Any, shots: Path
) -> None:
    url, support_db, runs = setup
    run = runs[0]
    [pending] = run.pending
    watcher = browser.new_page(viewport={"width": 1400, "height": 1100})
    watcher.goto(f"{url}/runs/{run.run_id}")
    watcher.evaluate("window.notReloaded = true")
    listing = browser.new_page()
    listing.goto(url + "/?status=&q=A123")
    assert watcher.locator("#steps tr.step[data-step='4']").count() == 0
    stale = browser.new_context(java_script_enabled=False).new_page()  # a second tab that is not kept current
    stale.goto(url + "/decisions")

    deciding = browser.new_page(viewport={"width": 1400, "height": 800})
    deciding.goto(url + "/decisions")
    card = deciding.locator(f'form.decision[data-run="{run.run_id}"][data-call="{pending.call.id}"]')
    assert pending.args_hash in card.inner_text() and '"amount_cents"' in card.inner_text()
    deciding.screenshot(path=str(shots / "ui-decisions.png"))
    card.locator("button.approve").click()
    deciding.wait_for_url(f"{url}/decisions")  # back where the decision was made
    assert "approved issue_refund" in deciding.locator(".flash").inner_text()

    watcher.locator("#run-status", has_text="done").wait_for(timeout=WAIT_MS)  # pushed by the event stream
    assert watcher.evaluate("window.notReloaded") is True
    listing.locator(f'#runs tr[data-run="{run.run_id}"] td.status', has_text="done").wait_for(timeout=WAIT_MS)
    assert watcher.locator("#steps tr.step[data-step='4']").count() == 1  # the final answer's step, new
    assert (
        f"approved by {default_approver()}" in watcher.locator(f'#steps tr[data-call="{pending.call.id}"]').inner_text()
    )
    assert watcher.locator("#waterfall svg rect").count() >= 4
    assert refunded_cents(support_db, "A123") == pending.call.arguments["amount_cents"]
    watcher.screenshot(path=str(shots / "ui-run.png"), full_page=True)

    again = stale.locator(f'form.decision[data-run="{run.run_id}"][data-call="{pending.call.id}"] button.approve')
    again.click()  # the same call, from a tab opened before the decision
    assert "was already decided" in stale.locator("#refused").inner_text()
    for tab in (watcher, deciding, stale, listing):
        tab.close()


def test_rejected_with_a_reason_ends_with_it(setup: tuple[str, Path, list[RunState]], browser: Any) -> None:
    url, support_db, runs = setup
    run = runs[1]
    [pending] = run.pending
    page = browser.new_page()
    page.goto(f"{url}/runs/{run.run_id}")
    card = page.locator(f'form.decision[data-run="{run.run_id}"][data-call="{pending.call.id}"]')
    card.locator("input[name=reason]").fill("refunds over 20 USD need a manager")
    card.locator("button.reject").click()
    page.wait_for_url(f"{url}/runs/{run.run_id}")
    page.locator("#run-status", has_text="done").wait_for(timeout=WAIT_MS)
    assert "refunds over 20 USD need a manager" in page.locator("#run-head .answer").inner_text()
    assert "rejected by" in page.locator(f'#steps tr[data-call="{pending.call.id}"]').inner_text()
    assert refunded_cents(support_db, "B200") == 0
    page.close()
