"""What prompt caching saves on the seed's 10-step arithmetic, through the real Anthropic adapter and loop.

The seed's run: system prompt and tools of about 1,500 tokens, a 100-token task, each step 150 tokens of model
output (a thought and a tool call) and a 600-token tool result (`read_page` of tests/cost_tools.py on the real
stdio tool server). A loopback server speaks the Messages API and keeps the cache as Anthropic documents it: a
breakpoint's prefix (tools -> system -> messages up to that block) is written when first sent and read when sent
again within its TTL; the longest prefix already cached is read, the rest up to the last breakpoint is written,
the tail after it is plain input. It looks back from explicit breakpoints only, so it is a lower bound on what the
real API reads. Tokens are counted at four characters a token of each block's JSON (the seed's rule).

`python -m bench.prompt_cache` prints the figures; `run()` returns them for bench/run.py.
"""

import hashlib
import json
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio

from toolwire_client import Agent, AnthropicModel, McpSource, PromptCache, RunLimits, RunState, ToolBox, default_prices

REPO = Path(__file__).resolve().parents[1]
MODEL = "claude-sonnet-4-5"
STEPS = 10
THOUGHT = "Reading the next page of the report to collect the quarterly figures for every region. " * 6
SYSTEM = "You read reports page by page and answer with the figures you found. " * 80
TASK = "Read the report's first nine pages and give the total for all regions. " * 5


def tokens(value: Any) -> int:
    return max(1, len(json.dumps(value, sort_keys=True)) // 4)


class CacheServer:
    """The Messages API's cache accounting over a run's requests, and the run's replies (one read_page per step)."""

    def __init__(self) -> None:
        self.cached: set[str] = set()
        self.usages: list[dict[str, Any]] = []

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        usage = self.account(body)
        self.usages.append(usage)
        step = sum(1 for m in body["messages"] if m["role"] == "assistant") + 1
        content: list[dict[str, Any]] = [{"type": "text", "text": THOUGHT}]
        if step < STEPS:
            call = {"type": "tool_use", "id": f"toolu_{step:02d}", "name": "read_page", "input": {"page": step}}
            content.append(call)
        reply = {"id": f"msg_{step:02d}", "type": "message", "role": "assistant", "model": body["model"]}
        return reply | {"content": content, "stop_reason": "tool_use" if step < STEPS else "end_turn", "usage": usage}

    def account(self, body: dict[str, Any]) -> dict[str, Any]:
        blocks = _blocks(body)
        marks = [i for i, (_, marked) in enumerate(blocks) if marked]
        sizes = [tokens(block) for block, _ in blocks]
        keys = [_prefix_key(blocks[: i + 1]) for i in marks]
        read_to = max((i + 1 for i, key in zip(marks, keys, strict=True) if key in self.cached), default=0)
        write_to = marks[-1] + 1 if marks else 0
        self.cached.update(keys)
        read, written = sum(sizes[:read_to]), sum(sizes[read_to:write_to])
        ttl_1h = any(marked == "1h" for _, marked in blocks)
        return {
            "input_tokens": sum(sizes[max(read_to, write_to) :]),
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written,
            "cache_creation": {
                "ephemeral_5m_input_tokens": 0 if ttl_1h else written,
                "ephemeral_1h_input_tokens": written if ttl_1h else 0,
            },
            "output_tokens": 150,
        }


def _blocks(body: dict[str, Any]) -> list[tuple[dict[str, Any], str | None]]:
    """Every block of the prompt in cache order, each with its breakpoint's TTL (None when unmarked)."""
    out: list[tuple[dict[str, Any], str | None]] = []
    items = [*body.get("tools", []), *body.get("system", [])]
    for message in body["messages"]:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        items.extend({**block, "role": message["role"]} for block in blocks)
    for item in items:
        mark = item.get("cache_control")
        plain = {k: v for k, v in item.items() if k != "cache_control"}
        out.append((plain, mark.get("ttl", "5m") if isinstance(mark, dict) else None))
    return out


def _prefix_key(blocks: list[tuple[dict[str, Any], str | None]]) -> str:
    return hashlib.sha256(json.dumps([b for b, _ in blocks], sort_keys=True).encode()).hexdigest()


class _Loopback(ThreadingHTTPServer):
    daemon_threads = True


def serve(answer: Callable[[dict[str, Any]], dict[str, Any]]) -> _Loopback:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            payload = json.dumps(answer(body)).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = _Loopback(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


async def seed_run(base_url: str, prompt_cache: PromptCache) -> RunState:
    model = AnthropicModel(MODEL, api_key="sk-loopback", base_url=base_url, prompt_cache=prompt_cache)
    argv = [sys.executable, "-m", "toolwire_server", "tests/cost_tools.py:registry", "--stdio", "--log-level", "ERROR"]
    tools = ToolBox([McpSource("cost", command=argv, cwd=str(REPO))])
    agent = Agent.of(model, tools, system=SYSTEM, limits=RunLimits(max_steps=STEPS + 1))
    try:
        return await agent.run(TASK)
    finally:
        await model.aclose()


async def cached_run(prompt_cache: PromptCache) -> tuple[RunState, CacheServer]:
    """The seed's run against a fresh loopback cache: the run's state and what the server accounted."""
    cache = CacheServer()
    server = serve(cache.answer)
    try:
        return await seed_run(f"http://127.0.0.1:{server.server_address[1]}", prompt_cache), cache
    finally:
        server.shutdown()


async def measure(prompt_cache: PromptCache) -> dict[str, Any]:
    state, cache = await cached_run(prompt_cache)
    price = default_prices().lookup(MODEL)
    assert price is not None and state.stop_reason == "final_answer", state.report
    input_only = replace(state.usage, output_tokens=0)
    return {
        "prompt_cache": prompt_cache,
        "steps": len(cache.usages),
        "input_tokens": state.usage.input_tokens,
        "cache_read_tokens": state.usage.cache_read_tokens,
        "cache_write_tokens": state.usage.cache_write_tokens,
        "first_step_input": cache.usages[0]["input_tokens"] + cache.usages[0]["cache_creation_input_tokens"],
        "input_cost_usd": price.cost(input_only),
    }


def run() -> dict[str, Any]:
    async def all_three() -> dict[str, Any]:
        return {ttl: await measure(ttl) for ttl in ("off", "5m", "1h")}

    runs = anyio.run(all_three)
    off = runs["off"]["input_cost_usd"]
    figures = [
        {
            "name": f"seed's 10-step run, input cost with {ttl} cache breakpoints ({MODEL})",
            "value": runs[ttl]["input_cost_usd"],
            "unit": "USD",
            "reference": "same run, caching off",
            "reference_value": off,
        }
        for ttl in ("5m", "1h")
    ]
    return {"figures": figures, "runs": runs}


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
