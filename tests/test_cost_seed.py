"""The seed's cost arithmetic, through real scripted runs against the real stdio tool server.

Each step the model writes 150 tokens and the tool returns its result; the whole list is sent again, so step n's
input is 1,600 (system prompt, tools, task) plus what the earlier steps added. The usage reported here is derived
from the real message list (four characters a token), so cutting tool results on the server shows up in the bill.
"""

import sys
from pathlib import Path

import pytest

from toolwire_client.config import RunLimits
from toolwire_client.loop import Agent
from toolwire_client.models.pricing import Price, PriceTable
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.run.state import RunState
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_server import texts
from toolwire_shared.messages import AssistantMessage, Message, ToolCall, ToolResultMessage
from toolwire_shared.usage import Usage

HERE = Path(__file__).resolve().parent
FIRST_STEP_INPUT = 1_600
OUTPUT_PER_STEP = 150
PRICES = PriceTable({"seed-priced": Price(input=3.0, output=15.0)})  # the seed's assumed 3 and 15 USD per million


def seed_usage(call: int, messages: list[Message]) -> Usage:
    """What a provider would report: the list grew by 150 tokens of model text and the tool's result each step."""
    results = sum(len(m.content) // 4 for m in messages if isinstance(m, ToolResultMessage))
    turns = sum(1 for m in messages if isinstance(m, AssistantMessage))
    return Usage(input_tokens=FIRST_STEP_INPUT + turns * OUTPUT_PER_STEP + results, output_tokens=OUTPUT_PER_STEP)


def reads_pages(steps: int):  # type: ignore[no-untyped-def]
    """A script that reads one new page per step and answers on the last step."""

    def script(messages: list[Message]) -> AssistantMessage:
        done = sum(1 for m in messages if isinstance(m, AssistantMessage))
        if done + 1 >= steps:
            return AssistantMessage(text=f"Read {done} pages.")
        call = ToolCall(id=f"call_{done}", name="read_page", arguments={"page": done + 1})
        return AssistantMessage(tool_calls=[call])

    return script


async def run_seed(steps: int, max_result_chars: int | None = None) -> RunState:
    command = [sys.executable, "-m", "toolwire_server", f"{HERE / 'cost_tools.py'}:registry", "--stdio"]
    if max_result_chars is not None:
        command += ["--max-result-chars", str(max_result_chars)]
    model = ScriptedModel(reads_pages(steps), name="seed-priced", usage_fn=seed_usage)
    agent = Agent.of(
        model,
        ToolBox([McpSource("cost", command=command)]),
        name="seed-cost",
        limits=RunLimits(max_steps=steps),
        price_fn=lambda usage: PRICES.cost(model.model, usage),
    )
    return await agent.run("Read the report and say how many pages it has.")


def cap_for(tokens: int, total_chars: int = 2400) -> int:
    """The server cap whose cut result, with the note the model reads, is exactly `tokens` tokens long."""
    for cap in range(100, total_chars):
        if cap + 1 + len(texts.truncated_note(cap, total_chars)) == tokens * 4:
            return cap
    raise AssertionError("no cap gives that size")


async def test_ten_steps_cost_49750_input_1500_output_and_17_cents() -> None:
    state = await run_seed(10)
    assert state.status == "done" and len(state.steps) == 10
    assert [s.usage.input_tokens for s in state.steps] == [1_600 + 750 * (n - 1) for n in range(1, 11)]
    assert state.usage.input_tokens == 49_750 and state.usage.output_tokens == 1_500
    assert state.cost_usd == pytest.approx(49_750 * 3 / 1e6 + 1_500 * 15 / 1e6)
    assert round(state.cost_usd or 0, 2) == 0.17
    step_costs = [((1_600 + 750 * (n - 1)) * 3 + 150 * 15) / 1e6 for n in range(1, 11)]
    assert [s.cost_usd for s in state.steps] == pytest.approx(step_costs)  # each step priced on its own usage


async def test_twenty_steps_cost_174500_input_tokens_three_and_a_half_times_as_much() -> None:
    state = await run_seed(20)
    assert len(state.steps) == 20 and state.usage.input_tokens == 174_500
    assert state.usage.input_tokens / 49_750 == pytest.approx(3.5, abs=0.01)


async def test_server_result_cap_cuts_ten_steps_to_31750() -> None:
    cap = cap_for(200)
    state = await run_seed(10, max_result_chars=cap)
    note = "\n" + texts.truncated_note(cap, 2400)  # the server's cut: `cap` characters, then the note as a block
    assert all(r.content.endswith(note) and len(r.content) == cap + len(note) for s in state.steps for r in s.results)
    assert {len(r.content) // 4 for s in state.steps for r in s.results} == {200}
    assert state.usage.input_tokens == 31_750
    saved = 1 - state.usage.input_tokens / 49_750
    assert saved == pytest.approx(0.36, abs=0.005)
