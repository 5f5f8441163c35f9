"""A tool's question to a person answered in the run console, in a real browser (Debian's chromium, headless, driven
by playwright) against `toolwire ui` in its own process: a run of the elicitation test tools paused on a form
question, whose form keeps what was typed while the live page is sent other changes; an answer that does not fit
the schema shows the field's error and records nothing; the right one is recorded, the console resumes the run,
which ends `done` with the tool having received the answer, once; the same question answered again from a stale tab
is refused readably. The screenshot docs/ui-question.png is made here (`TOOLWIRE_SCREENSHOTS=docs`
writes it there)."""

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from console import CHROMIUM, NO_CHROMIUM, console, in_thread, waiting_run

from helpers.cli import REPO
from helpers.servers import serve_argv
from toolwire_client.assembly.agents import build_agent
from toolwire_client.config import RunConfig, RunLimits, ServerSpec
from toolwire_client.run.state import RunState
from toolwire_client.store import open_store
from toolwire_client.store.answers import recent_answers
from toolwire_client.store.approvals import default_approver

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
TOOLS = "tests/elicit/elicit_tools.py:registry"
DRIVER = (sys.executable, str(REPO / "tests" / "elicit" / "driver.py"))
"""`toolwire` with the elicitation tests' scripted model registered: the console resumes the run on it."""
WAIT_MS = 30_000


def paused_on_a_question(db: str, tool_log: Path) -> RunState:
    """A run whose `book_table` asks who the table is for (a form: name, party), saved as waiting for a person."""
    import elicit.driver  # noqa: F401  # registers the scripted model `asks` in this process

    server = ServerSpec(
        name="elicit", command=serve_argv(TOOLS, "--stdio"), env={"ELICIT_LOG": str(tool_log)}, cwd=str(REPO)
    )
    config = RunConfig(model="scripted:asks", servers=[server], limits=RunLimits(max_steps=4))

    async def main() -> RunState:
        store = await open_store(db)
        try:
            return await build_agent(config, store=store).run("Book a table at Noma")
        finally:
            await store.aclose()

    return anyio.run(main)


def on_record(db: str, run_id: str) -> tuple[RunState, list[dict[str, Any]]]:
    """The run's saved state and the answers on record."""

    async def read() -> tuple[RunState, list[dict[str, Any]]]:
        store = await open_store(db)
        try:
            return await store.load(run_id), await recent_answers(store)
        finally:
            await store.aclose()

    return in_thread(anyio.run, read)


def tool_runs(tool_log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in tool_log.read_text().splitlines()] if tool_log.exists() else []


@pytest.fixture(scope="module")
def paused(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Path, RunState]]:
    folder = tmp_path_factory.mktemp("ui-answer")
    db, tool_log = str(folder / "runs.db"), folder / "tool.jsonl"
    runs: list[RunState] = []
    with console(db, folder, command=DRIVER, meanwhile=lambda: runs.append(paused_on_a_question(db, tool_log))) as url:
        [run] = runs
        assert run.status == "waiting_for_approval" and run.pending[0].state == "pending_input"
        yield url, db, tool_log, run


def test_a_question_is_answered_through_the_generated_form(
    paused: tuple[str, str, Path, RunState], browser: Any, shots: Path
) -> None:
    url, db, tool_log, run = paused
    [pending] = run.pending
    stale = browser.new_context(java_script_enabled=False).new_page()  # a second tab, not kept current
    stale.goto(f"{url}/runs/{run.run_id}")
    page = browser.new_page(viewport={"width": 1400, "height": 420})
    page.goto(url + "/decisions")
    card = page.locator(f'form.question[data-run="{run.run_id}"][data-call="{pending.call.id}"]')
    assert "Who is the table at Noma for?" in card.inner_text()
    page.screenshot(path=str(shots / "ui-question.png"))

    card.locator('input[name="f.name"]').fill("Ada")
    card.locator('input[name="f.name"]').blur()  # typed, then looked elsewhere: the form is no longer focused
    # Another run starts waiting as the page is open: the live page is sent the decisions again, and what was typed
    # stays until the form is sent.
    in_thread(waiting_run, db, "run_other")
    page.locator("#waiting-count", has_text="2").wait_for(timeout=WAIT_MS)
    assert card.locator('input[name="f.name"]').input_value() == "Ada" and page.locator("form.decision").count() == 0
    party = card.locator('input[name="f.party"]')
    # The browser would not send letters from a number field; a script or an old browser may: the server checks.
    party.evaluate("field => { field.type = 'text'; field.value = 'four'; }")
    with page.expect_response(lambda r: r.url.endswith("/answer")) as sent:
        card.locator("button[value=accept]").click()
    assert sent.value.status == 400
    said = page.locator("#answer-refused").inner_text()
    assert "'party'" in said and "'four' is not an integer" in said
    state, answered = on_record(db, run.run_id)
    assert state.pending[0].state == "pending_input" and answered == [] and tool_runs(tool_log) == []

    again = page.locator(f'form.question[data-call="{pending.call.id}"]')  # the form again, with what was typed
    assert again.locator('input[name="f.name"]').input_value() == "Ada"
    again.locator('input[name="f.party"]').fill("4")
    again.locator("button[value=accept]").click()
    page.wait_for_url(url + "/decisions")
    assert "answered the question of book_table" in page.locator(".flash").inner_text()
    assert f'accept: {{"name": "Ada", "party": 4}} by {default_approver()}' in page.locator("#answered").inner_text()

    page.goto(f"{url}/runs/{run.run_id}")
    page.locator("#run-status", has_text="done").wait_for(timeout=WAIT_MS)
    assert "booked Noma for Ada, 4 people" in page.locator("#run-head .answer").inner_text()
    assert [(r["action"], r["content"]) for r in tool_runs(tool_log)] == [("accept", {"name": "Ada", "party": 4})]
    _, answered = on_record(db, run.run_id)
    assert [(a["action"], a["by"]) for a in answered] == [("accept", default_approver())]

    stale.locator(f'form.question[data-call="{pending.call.id}"] button[value=decline]').click()
    assert "was already answered (accept, by" in stale.locator("#refused").inner_text()
    assert len(tool_runs(tool_log)) == 1
    for tab in (page, stale):
        tab.close()
