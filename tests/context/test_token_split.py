"""Where the tokens go: each request's input tokens split into system, tool definitions, history and tool results,
scaled to what the provider reported, on the chat spans (toolwire.input_tokens.*), in `trace show` and its
`--json`, and on the console's run page."""

import json
import re
from pathlib import Path

import anyio
import httpx2

from context.script import PageReader
from context.test_kept_results import pages
from context.wire import WIRES
from helpers.cli import clean_env, run_toolwire
from helpers.fake_providers import FakeProvider
from helpers.telemetry import install
from toolwire_client.config import RunConfig, RunLimits
from toolwire_client.loop import Agent
from toolwire_client.run.state import RunState
from toolwire_client.store import open_store
from ui.console import console

PARTS = ("system", "tools", "history", "results")
REPORTED = 5_000


async def read_the_report(db: str) -> RunState:
    """A run on OpenAI Responses whose provider reports REPORTED input tokens a request."""
    wire = WIRES[2]
    store = await open_store(db)
    config = RunConfig(model="openai-responses:fake", system="You read reports.", limits=RunLimits(max_steps=10))
    with FakeProvider(PageReader(wire, pages=3, input_tokens=REPORTED)) as fake:
        model = wire.model(fake)
        state = await Agent(model, pages(), config=config, store=store).run("Read the report")
        await model.aclose()
    await store.aclose()
    return state


def test_each_request_s_tokens_are_split_on_its_span_in_trace_show_and_on_the_console(tmp_path: Path) -> None:
    telemetry = install()
    telemetry.spans.clear()
    db = str(tmp_path / "runs.db")
    state = anyio.run(read_the_report, db)
    assert state.status == "done", state.report

    chats = [s for s in telemetry.spans.get_finished_spans() if s.name.startswith("chat ")]
    assert len(chats) == len(state.steps) == 4
    spans = [{part: span.attributes[f"toolwire.input_tokens.{part}"] for part in PARTS} for span in chats]
    assert all(sum(parts.values()) == REPORTED for parts in spans)  # scaled to the provider's count
    assert all(span.attributes["toolwire.input_tokens.scaled"] for span in chats)
    assert all(parts["system"] > 0 and parts["tools"] > 0 for parts in spans)
    assert spans[0]["results"] == 0 < spans[1]["results"] < spans[3]["results"]  # results pile up step by step

    env = clean_env()
    shown = json.loads(run_toolwire("trace", "show", state.run_id, "--json", "--db", db, env=env).stdout)
    from_store = [{part: step["input_tokens"][part] for part in PARTS} for step in shown["steps"]]
    assert from_store == spans  # counted again from the saved run alone: the same split
    table = run_toolwire("trace", "show", state.run_id, "--db", db, env=env).stdout
    assert "input tokens by part (system | tool definitions | history | tool results):" in table
    last = spans[3]
    assert f"step 4 | system {last['system']:,} | tools {last['tools']:,} | history {last['history']:,}" in table

    with console(db, tmp_path) as url:
        page = httpx2.get(f"{url}/runs/{state.run_id}", timeout=30).text
    section = page.split("<h2>Where the tokens go</h2>")[1].split("</section>")[0]
    rows = re.findall(r"<tr><td>(\d+)</td>((?:<td>[\d,]+</td>){5})", section)
    cells = [[int(c.replace(",", "")) for c in re.findall(r"<td>([\d,]+)</td>", row)] for _, row in rows]
    assert [cell[:4] for cell in cells] == [[parts[p] for p in PARTS] for parts in spans]
    assert all(cell[4] == REPORTED for cell in cells)
