"""Prompt caching on the seed's 10-step run (bench/prompt_cache.py): the real adapter and loop against a loopback
Messages API that keeps the cache as Anthropic documents it. Each step must read what the step before sent and
write only what it added; the saved turns must stay as the model sent them."""

from dataclasses import replace
from typing import Any

import pytest
from bench.prompt_cache import STEPS, cached_run

from toolwire_client.models.anthropic_cache import place_breakpoints
from toolwire_client.models.pricing import default_prices
from toolwire_shared.records import record_json


async def test_each_step_reads_the_whole_prompt_the_step_before_sent() -> None:
    state, cache = await cached_run("5m")
    assert state.stop_reason == "final_answer" and len(cache.usages) == STEPS
    prompts = [
        u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"] for u in cache.usages
    ]
    assert cache.usages[0]["cache_read_input_tokens"] == 0
    for n in range(1, STEPS):
        assert cache.usages[n]["cache_read_input_tokens"] == prompts[n - 1]  # read up to where the last call ended
        assert cache.usages[n]["cache_creation_input_tokens"] == prompts[n] - prompts[n - 1]  # wrote what it added
    assert (state.usage.input_tokens, state.usage.cache_read_tokens) == (sum(prompts), sum(prompts[:-1]))
    for message in state.messages:  # breakpoints went on copies: the saved turns are what the model sent
        assert "cache_control" not in str(record_json(message))


async def test_caching_cuts_the_input_bill_and_one_hour_writes_are_priced_above_five_minute_ones() -> None:
    price = default_prices().lookup("claude-sonnet-4-5")
    assert price is not None
    costs = {}
    for ttl in ("off", "5m", "1h"):
        state, _ = await cached_run(ttl)
        assert state.usage.cache_write_1h_tokens == (state.usage.cache_write_tokens if ttl == "1h" else 0)
        costs[ttl] = price.cost(replace(state.usage, output_tokens=0))
    assert costs["5m"] < costs["1h"] < costs["off"]
    assert costs["5m"] / costs["off"] == pytest.approx(0.30, abs=0.03)  # the seed's run: about 70% less


def test_at_most_four_breakpoints_and_none_when_off() -> None:
    turns = [{"role": r, "content": [{"type": "text", "text": r}]} for r in ("user", "assistant") * 5]
    body: dict[str, Any] = {"tools": [{"name": "a"}, {"name": "b"}], "system": [{"type": "text", "text": "s"}]}
    off = {**body, "messages": [dict(t) for t in turns]}
    place_breakpoints(off, "off")
    assert "cache_control" not in str(off)
    on = {**body, "messages": turns}
    place_breakpoints(on, "1h")
    assert str(on).count("'cache_control'") == 4 and "'ttl': '1h'" in str(on)
    assert "cache_control" not in str(turns)  # the caller's messages were copied, not marked
