"""The context budget kept by Anthropic's own mechanism next to toolwire's own form, on the run of
bench/context_bench.py (200 steps of `page(n)`, about 20 kB each, on the real stdio tool server), through the real
Anthropic adapter against a loopback server speaking the Messages wire format (tests/helpers/fake_providers.py):

- local: `--context-budget 20000 --context-native off`: toolwire clears old results to stubs and summarises;
- native: `--context-budget 20000 --context-native on`: every request carries `context_management` (the provider
  clears) and the compact steps are compaction requests answered with a compaction block.

For each run: the tokens each request carries (tiktoken's cl100k_base over the body's system, tools and messages,
as sent), peak and total, and the tokens the model reads of it. The local form's model reads what is carried; for
the native form the provider's clearing is emulated as its documentation describes it (past the trigger, the oldest
tool results but the latest 3 replaced by a placeholder, at least `clear_at_least` tokens of them, until the request
is within the trigger), so that figure is an estimate, not a measurement of Anthropic. OpenAI's `responses/compact`
is left out: its compaction item is opaque, and how many tokens it is can only be measured against OpenAI.

`python -m bench.context_native_bench` prints the figures; `run()` returns them for bench/run.py.
"""

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from bench.context_bench import BUDGET, STEPS, THOUGHT, pages, token_figure

from toolwire_client.config import RunConfig, RunLimits
from toolwire_client.loop import Agent
from toolwire_client.models.anthropic import AnthropicModel
from toolwire_client.models.token_split import count

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from helpers.fake_providers import FakeProvider, RecordedRequest, Reply, anthropic_message  # noqa: E402

PLACEHOLDER = 12
"""About what the provider's note in place of a cleared result costs, in tokens."""


class PageReader:
    """The provider: one page a turn after the last result the request carries, a compaction block for a
    compaction request; counts what each request carries and what the model would read of it."""

    def __init__(self) -> None:
        self.carried: list[int] = []
        self.read: list[int] = []
        self.compactions = 0

    def __call__(self, request: RecordedRequest) -> Reply:
        body = request.body
        parts = [json.dumps(body.get(key)) for key in ("system", "tools")]
        messages = body["messages"]
        sizes = [count(json.dumps(m)) for m in messages]
        carried = sum(sizes) + sum(count(part) for part in parts)
        self.carried.append(carried)
        self.read.append(_read(carried, messages, sizes, body.get("context_management")))
        blocks = [b for m in messages if isinstance(m["content"], list) for b in m["content"]]
        results = [b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"]
        if "compaction" in body:
            self.compactions += 1
            block = {"type": "compaction", "content": f"Pages up to {results[-1]} are read.", "signature": "sig"}
            usage = {
                "input_tokens": 0,
                "output_tokens": 0,
                "iterations": [{"type": "compaction", "input_tokens": carried, "output_tokens": 40}],
            }
            return Reply(
                body={**anthropic_message().body, "content": [block], "stop_reason": "compaction", "usage": usage}
            )
        n = int(results[-1].removeprefix("p")) + 1 if results else 1
        calls = [(f"p{n}", "page", {"n": n})] if n <= STEPS else []
        return anthropic_message(
            THOUGHT if calls else "done", calls, usage={"input_tokens": carried, "output_tokens": 40}
        )


def _read(carried: int, messages: list[dict[str, Any]], sizes: list[int], managed: dict[str, Any] | None) -> int:
    """What the model reads: all of it, or past the trigger what is left after the emulated clearing."""
    if managed is None:
        return carried
    edit = managed["edits"][0]
    trigger, least, keep = edit["trigger"]["value"], edit["clear_at_least"]["value"], edit["keep"]["value"]
    if carried <= trigger:
        return carried
    clearable = [size for m, size in zip(messages, sizes, strict=True) if _holds_results(m)][:-keep]
    cleared = 0
    for size in clearable:
        if cleared >= least and carried - cleared <= trigger:
            break
        cleared += size - PLACEHOLDER
    return carried - cleared if cleared >= least else carried


def _holds_results(message: dict[str, Any]) -> bool:
    content = message["content"]
    return isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)


async def one_run(name: str, native: str) -> dict[str, Any]:
    reader = PageReader()
    config = RunConfig(
        model="anthropic:claude-bench",
        context_budget=BUDGET,
        context_native=native,  # type: ignore[arg-type]
        limits=RunLimits(max_steps=STEPS * 2),
        prompt_cache="off",
    )
    with FakeProvider(reader) as fake:
        model = AnthropicModel("claude-bench", api_key="sk-ant-bench", base_url=fake.anthropic_url, prompt_cache="off")
        async with pages() as box:
            state = await Agent(model, box, config=config).run("Read every page of the report and note its totals.")
        await model.aclose()
    assert state.status == "done", state.report
    return {
        "name": name,
        "steps": len(state.steps),
        "compactions": sum(1 for step in state.steps if step.kind == "compact"),
        "peak_carried": max(reader.carried),
        "total_carried": sum(reader.carried),
        "peak_read": max(reader.read),
        "total_read": sum(reader.read),
    }


async def _all() -> dict[str, Any]:
    local = await one_run("local: toolwire clears and summarises", "off")
    native = await one_run("native: Anthropic clears (emulated) and compacts", "on")
    figures = [
        token_figure(f"{what}, --context-native on", native, key, local, LOCAL)
        for what, key in (
            ("peak request carried", "peak_carried"),
            ("total input carried", "total_carried"),
            ("peak request read by the model (provider clearing emulated)", "peak_read"),
            ("total input read by the model (provider clearing emulated)", "total_read"),
        )
    ]
    return {"figures": figures, "runs": [local, native], "budget": BUDGET}


LOCAL = "--context-native off (toolwire's own form), same budget"


def run() -> dict[str, Any]:
    return anyio.run(_all)


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
