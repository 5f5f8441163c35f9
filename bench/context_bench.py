"""The context budget on a long run: 200 steps whose tool returns about 20 kB each (`page(n)` of
tests/context/pages_tools.py on the real stdio tool server), run three ways on the same script:

- unmanaged: every result inline (`inline_result_chars=None`) and no budget: each request re-sends every result;
- results kept out: the default `--inline-result-chars 4000`, no budget;
- managed: the default inline size and `--context-budget 20000`: the oldest results cleared, older turns summarised.

Each request is counted by the model the loop calls (tiktoken's cl100k_base over each message's JSON and the tool
definitions, every message counted once): the peak request and the total input over the run. The managed run must
send at most 25% of the unmanaged peak and 30% of its total; then every result is read back through the run's own
`read_result` tool, page by page in 4,000-character parts, and compared with the tool's output byte for byte. The CPU
the context keeping takes per request (the view, the decisions, building a summary request; the model's own time
left out) is measured with the process clock.

`python -m bench.context_bench` prints the figures; `run()` returns them for bench/run.py.
"""

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from toolwire_client import texts
from toolwire_client.config import RunConfig, RunLimits
from toolwire_client.context.keeper import ContextKeeper
from toolwire_client.loop import Agent
from toolwire_client.models.base import ModelReply
from toolwire_client.models.token_split import count
from toolwire_client.run.state import RunState
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.source import RunContext
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import AssistantMessage, Message, SystemMessage, ToolCall
from toolwire_shared.records import record_text
from toolwire_shared.tools import ToolSpec, spec_json
from toolwire_shared.usage import Usage

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from context.pages_tools import page_text  # noqa: E402  (the tool's own text, to compare with)

STEPS = 200
BUDGET = 20_000
THOUGHT = "I have read the page; the totals so far are noted and I go on with the next page of the report. " * 2
SUMMARY = "Summary: pages 1 to {n} are read; each page's TOTAL lines are noted in its result (read_result)."


class CountingModel:
    """Implements Model: one page a turn for STEPS turns, then the answer; a summary request answered with a summary.
    Reports each request's input tokens as counted here, and keeps them."""

    provider = "scripted"
    model = "context-bench"
    server_address: str | None = None
    server_port: int | None = None

    def __init__(self) -> None:
        self.turn = 0
        self.requests: list[int] = []
        self.summaries = 0
        self._counted: dict[int, tuple[Message, int]] = {}
        self._specs: tuple[list[ToolSpec], int] = ([], 0)

    def _tokens(self, message: Message) -> int:
        known = self._counted.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        tokens = count(record_text(message))
        self._counted[id(message)] = (message, tokens)
        return tokens

    def _spec_tokens(self, tools: list[ToolSpec]) -> int:
        if tools != self._specs[0]:
            self._specs = (list(tools), count(json.dumps([spec_json(t) for t in tools])))
        return self._specs[1]

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None = None
    ) -> ModelReply:
        tokens = sum(map(self._tokens, messages)) + self._spec_tokens(tools)
        self.requests.append(tokens)
        first = messages[0] if messages else None
        if isinstance(first, SystemMessage) and first.content == texts.COMPACT_SYSTEM:
            self.summaries += 1
            message = AssistantMessage(text=SUMMARY.format(n=self.turn))
        elif self.turn < STEPS:
            self.turn += 1
            call = ToolCall(id=f"p{self.turn}", name="page", arguments={"n": self.turn})
            message = AssistantMessage(text=THOUGHT, tool_calls=[call])
        else:
            message = AssistantMessage(text=f"done: {STEPS} pages read")
        return ModelReply(message=message, usage=Usage(input_tokens=tokens, output_tokens=40))

    async def aclose(self) -> None:
        return None


def pages() -> ToolBox:
    argv = [sys.executable, "-m", "toolwire_server", "tests/context/pages_tools.py:registry", "--stdio"]
    return ToolBox([McpSource("pages", command=[*argv, "--log-level", "ERROR"], cwd=str(REPO))])


class TimedKeeper(ContextKeeper):
    """The Agent's keeper, its CPU per request measured (the compaction's model call left out)."""

    cpu_us: list[tuple[str, float]]
    model_cpu: float

    async def request(self, state: RunState, specs: Any, compact: Any) -> Any:
        self.model_cpu = 0.0
        steps = len(state.steps)

        async def timed_compact(asked: list[Message], native: Any) -> Any:
            started = time.process_time()
            step = await compact(asked, native)
            self.model_cpu += time.process_time() - started
            return step

        mark_before = self._runs[state.run_id].mark if state.run_id in self._runs else None
        started = time.process_time()
        sent, mark = await super().request(state, specs, timed_compact)
        took = (time.process_time() - started - self.model_cpu) * 1e6
        kind = "compaction" if len(state.steps) > steps else "clearing" if mark != mark_before else "view"
        self.cpu_us.append((kind, took))
        return sent, mark


async def one_run(name: str, config: RunConfig) -> dict[str, Any]:
    model = CountingModel()
    async with pages() as box:
        agent = Agent(model, box, config=config)
        keeper = TimedKeeper(config, agent.context.kept)
        keeper.cpu_us = []
        agent.context = keeper
        wall, cpu = time.perf_counter(), time.process_time()
        state = await agent.run("Read every page of the report and note its totals.")
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        readable = await read_back(box, state) if agent.context.kept is not None else None
    assert state.status == "done", state.report
    by_kind: dict[str, list[float]] = {}
    for kind, us in keeper.cpu_us:
        by_kind.setdefault(kind, []).append(us)
    return {
        "name": name,
        "steps": len(state.steps),
        "requests": len(model.requests),
        "summaries": model.summaries,
        "peak_request_tokens": max(model.requests),
        "total_input_tokens": sum(model.requests),
        "wall_s": wall,
        "cpu_s": cpu,
        "keeper_cpu_us": {
            kind: {"n": len(v), "median": statistics.median(v), "max": max(v)} for kind, v in by_kind.items()
        },
        "read_back": readable,
    }


async def read_back(box: ToolBox, state: RunState) -> dict[str, Any]:
    """Every page read again through read_result, 4,000 characters a call, compared with the tool's own text."""
    run = RunContext(state.run_id, state)
    calls = same = 0
    for n in range(1, STEPS + 1):
        text, offset = "", 0
        while True:
            calls += 1
            call = ToolCall(id=f"r{n}_{offset}", name="read_result", arguments={"call_id": f"p{n}", "offset": offset})
            result = await box.call(call, run)
            assert not result.is_error, result.content
            part = result.content.split("]\n", 1)[1]
            text += part
            offset += len(part)
            if "(the end)" in result.content.split("\n", 1)[0]:
                break
        same += text == page_text(n)
    return {"pages": STEPS, "identical": same, "read_result_calls": calls}


async def _all() -> dict[str, Any]:
    limits = RunLimits(max_steps=STEPS * 2)
    unmanaged = await one_run("unmanaged", RunConfig(model="scripted:bench", inline_result_chars=None, limits=limits))
    inline = await one_run("results kept out", RunConfig(model="scripted:bench", limits=limits))
    managed = await one_run("managed", RunConfig(model="scripted:bench", context_budget=BUDGET, limits=limits))
    peak = managed["peak_request_tokens"] / unmanaged["peak_request_tokens"]
    total = managed["total_input_tokens"] / unmanaged["total_input_tokens"]
    read = managed["read_back"]
    assert peak <= 0.25 and total <= 0.30, (peak, total)
    assert read["identical"] == read["pages"] == STEPS, read
    compaction = managed["keeper_cpu_us"].get("compaction", {"median": 0.0})["median"]
    view = managed["keeper_cpu_us"]["view"]["median"]
    figures = [
        token_figure("peak request, --context-budget 20000", managed, "peak_request_tokens", unmanaged),
        token_figure("total input, --context-budget 20000", managed, "total_input_tokens", unmanaged),
        token_figure("peak request, results kept out only", inline, "peak_request_tokens", unmanaged),
        token_figure("total input, results kept out only", inline, "total_input_tokens", unmanaged),
        {
            "name": "CPU of one compaction (decide, build the summary request; model excluded), median",
            "value": compaction,
            "unit": "µs",
            "reference": "a request's view with nothing to move, median",
            "reference_value": view,
        },
    ]
    return {
        "figures": figures,
        "runs": [unmanaged, inline, managed],
        "ratios": {"peak": peak, "total": total},
        "budget": BUDGET,
    }


UNMANAGED = "unmanaged: every result inline, no budget"


def token_figure(
    name: str, run: dict[str, Any], key: str, reference: dict[str, Any], said: str = UNMANAGED
) -> dict[str, Any]:
    """One figure of `bench/run.py`'s table: `run[key]` tokens next to the reference run's (`said`: what it was)."""
    return {"name": name, "value": run[key], "unit": "tokens", "reference": said, "reference_value": reference[key]}


def run() -> dict[str, Any]:
    return anyio.run(_all)


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
