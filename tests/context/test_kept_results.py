"""Results kept out of the prompt: a long result from a real tool server reaches each provider as its head, its size
and a handle; read_result reads any part of it, by range or by pattern, from the run's own list; the run store keeps
it whole; a wrong read_result call is answered with what a correct one looks like."""

import sys
from pathlib import Path

import pytest

from context.pages_tools import page_text
from context.wire import WIRES, Wire, results_sent, tools_sent
from helpers.fake_providers import FakeProvider
from toolwire_client import texts
from toolwire_client.config import RunConfig, RunLimits
from toolwire_client.loop import Agent
from toolwire_client.store import open_store
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import ToolResultMessage

REPO = Path(__file__).resolve().parents[2]
PAGES = [sys.executable, "-m", "toolwire_server", "tests/context/pages_tools.py:registry", "--stdio"]


def pages(max_result_chars: int | None = None) -> ToolBox:
    source = McpSource("pages", command=[*PAGES, "--log-level", "ERROR"], cwd=str(REPO))
    return ToolBox([source], max_result_chars=max_result_chars)


@pytest.mark.parametrize("wire", WIRES, ids=[w.name for w in WIRES])
async def test_a_long_result_is_sent_as_its_head_and_read_whole_through_read_result(wire: Wire, tmp_path: Path) -> None:
    full = page_text(3)
    wrong = [
        ("c4", "read_result", {"call_id": "nope"}),
        ("c5", "read_result", {"call_id": "c1", "pattern": "(unclosed"}),
        ("c6", "read_result", {"call_id": "c1", "offset": -1}),
    ]
    turns = [
        wire.reply(calls=[("c1", "page", {"n": 3})]),
        wire.reply(calls=[("c2", "read_result", {"call_id": "c1", "offset": 4000, "length": 3000})]),
        wire.reply(calls=[("c3", "read_result", {"call_id": "c1", "pattern": "TOTAL"})]),
        wire.reply(calls=wrong),
        wire.reply("done"),
    ]
    store = await open_store(str(tmp_path / "runs.sqlite3"))
    with FakeProvider() as fake:
        fake.push(*turns)
        model = wire.model(fake)
        config = RunConfig(model=f"{wire.spec}:fake")
        state = await Agent(model, pages(), config=config, store=store).run("Find the totals on page 3")
        await model.aclose()
    assert state.status == "done", state.report
    bodies = [request.body for request in fake.requests]

    assert "read_result" not in tools_sent(bodies[0])  # offered only once a result is kept out
    head = results_sent(bodies[1])["c1"]
    assert head.startswith(full[:4000]) and full[:4001] not in head
    assert f"result of {len(full):,} characters kept out of the prompt" in head
    assert 'read_result(call_id="c1", offset=4000)' in head
    assert "read_result" in tools_sent(bodies[1])

    part = results_sent(bodies[2])["c2"]
    assert part.endswith(full[4000:7000]) and part.startswith(
        f"[result c1: characters 4,000 to 7,000 of {len(full):,}."
    )

    lines = [f"{n}: {line}" for n, line in enumerate(full.splitlines(), 1) if "TOTAL" in line]
    assert len(lines) == 5 and results_sent(bodies[3])["c3"].endswith("\n".join(lines))

    errors = {call_id: text for call_id, text in results_sent(bodies[4]).items() if call_id in ("c4", "c5", "c6")}
    assert "no result of this run has call_id 'nope'" in errors["c4"]
    assert "'(unclosed' is not a regular expression" in errors["c5"]
    assert "offset must be an integer of at least 0 (got -1)" in errors["c6"]
    assert all('A correct call: read_result({"call_id": "c1"' in text for text in errors.values()), errors

    saved = await store.load(state.run_id)  # the store keeps the result whole
    await store.aclose()
    kept = next(m for m in saved.messages if isinstance(m, ToolResultMessage) and m.call_id == "c1")
    assert kept.content == full


async def test_a_result_under_the_inline_size_and_a_run_that_turns_it_off_send_it_whole() -> None:
    full = page_text(5)
    wire = WIRES[1]
    for config, expected in (
        (RunConfig(model="openai:fake", inline_result_chars=None), full),
        (RunConfig(model="openai:fake", inline_result_chars=len(full)), full),
    ):
        with FakeProvider() as fake:
            fake.push(wire.reply(calls=[("c1", "page", {"n": 5})]), wire.reply("done"))
            model = wire.model(fake)
            await Agent(model, pages(), config=config).run("Read page 5")
            await model.aclose()
        assert results_sent(fake.requests[1].body)["c1"] == expected
        assert "read_result" not in tools_sent(fake.requests[1].body)


async def test_the_result_cap_bounds_what_is_kept_and_read_result_reads_up_to_its_note() -> None:
    full, wire = page_text(3), WIRES[1]
    capped = full[:10_000] + texts.result_cut(10_000, len(full))
    config = RunConfig(model="openai:fake", limits=RunLimits(max_result_chars=10_000))
    with FakeProvider() as fake:
        fake.push(
            wire.reply(calls=[("c1", "page", {"n": 3})]),
            wire.reply(calls=[("c2", "read_result", {"call_id": "c1", "offset": 8000})]),
            wire.reply("done"),
        )
        model = wire.model(fake)
        state = await Agent(model, pages(10_000), config=config).run("Read page 3")
        await model.aclose()
    assert state.status == "done", state.report
    head = results_sent(fake.requests[1].body)["c1"]
    assert head.startswith(capped[:4000]) and f"result of {len(capped):,} characters kept out" in head
    rest = results_sent(fake.requests[2].body)["c2"]
    assert rest.endswith(capped[8000:]) and f"of {len(capped):,}. (the end)" in rest
