"""Loop overhead per step (scripted model, in-process tools) and parallel efficiency of one turn's tool calls.

`python -m bench.loop_bench` prints the figures as JSON; `run()` returns them for bench/run.py.
"""

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from toolwire_client import Agent, McpSource, RegistrySource, RunLimits, ScriptedModel, ToolBox, ToolSource
from toolwire_server import Registry
from toolwire_shared.messages import AssistantMessage, Message, ToolCall
from toolwire_shared.usage import Usage

REPO = Path(__file__).resolve().parents[1]
SLEEP_S = 0.2


async def echo(text: str) -> str:
    """Echo."""
    return text


async def sleepy(seconds: float, tag: str = "") -> str:
    """Sleep."""
    await anyio.sleep(seconds)
    return "slept"


def local() -> RegistrySource:
    registry = Registry("local")
    registry.add(echo)
    registry.add(sleepy)
    return RegistrySource(registry)


def stdio() -> McpSource:
    argv = [
        sys.executable,
        "-m",
        "toolwire_server",
        "tests/loop/loop_tools.py:registry",
        "--stdio",
        "--log-level",
        "ERROR",
    ]
    return McpSource("looptools", command=argv, cwd=str(REPO))


def echo_forever(messages: list[Message]) -> AssistantMessage:
    """One echo call per step, each with new arguments so the repeat guard never fires."""
    n = len(messages)
    return AssistantMessage(tool_calls=[ToolCall(id=f"c{n}", name="echo", arguments={"text": f"step {n}"})])


async def loop_overhead(steps: int = 100) -> dict[str, float]:
    """Median wall time of one step (scripted model, ordering check, spans, tool call, append), all in-process.

    The scripted model's own token estimate is switched off (fixed usage) so the figure is the harness's cost."""
    durations: list[float] = []
    last = [time.perf_counter()]

    def on_step(*_: Any) -> None:
        now = time.perf_counter()
        durations.append(now - last[0])
        last[0] = now

    model = ScriptedModel(echo_forever, usage_fn=lambda n, messages: Usage(input_tokens=100, output_tokens=10))
    async with ToolBox([local()]) as box:
        last[0] = time.perf_counter()
        await Agent.of(model, box, limits=RunLimits(max_steps=steps), on_step=on_step).run("bench")
    tail = durations[steps // 2 :]  # later steps carry the longest message lists
    return {
        "steps": steps,
        "median_us": statistics.median(durations) * 1e6,
        "median_us_last_half": statistics.median(tail) * 1e6,
    }


async def bare_loop(steps: int = 100) -> dict[str, float]:
    """The reference: the seed's loop with nothing around it (same script, same tool, same message types) and no
    checks, limits, records, spans or error handling; what a step costs at the very least."""
    from toolwire_shared.messages import ToolResultMessage, UserMessage

    messages: list[Message] = [UserMessage(content="bench")]
    durations: list[float] = []
    for _ in range(steps):
        started = time.perf_counter()
        reply = echo_forever(messages)
        messages.append(reply)
        for call in reply.tool_calls:
            messages.append(ToolResultMessage(call_id=call.id, name=call.name, content=await echo(**call.arguments)))
        durations.append(time.perf_counter() - started)
    return {
        "steps": steps,
        "median_us": statistics.median(durations) * 1e6,
        "median_us_last_half": statistics.median(durations[steps // 2 :]) * 1e6,
    }


async def parallel(source: ToolSource, n: int) -> dict[str, float]:
    """One turn of n calls of a tool that sleeps 200 ms: ideal is 200 ms; the ratio is actual / ideal."""
    calls = [ToolCall(id=f"p{i}", name="sleepy", arguments={"seconds": SLEEP_S, "tag": str(i)}) for i in range(n)]
    turn = [False]

    def script(messages: list[Message]) -> AssistantMessage:
        if turn[0]:
            return AssistantMessage(text="done")
        turn[0] = True
        return AssistantMessage(tool_calls=calls)

    async with ToolBox([source]) as box:
        state = await Agent(ScriptedModel(script), box).run("bench")
    step = state.steps[0]
    assert step.finished_at is not None and all(not r.is_error for r in step.results), step.results
    wall = max(r.duration_s for r in step.results)
    spread = (step.finished_at - step.started_at).total_seconds()
    return {"calls": n, "step_s": spread, "slowest_call_s": wall, "ratio": spread / SLEEP_S}


async def _all() -> dict[str, Any]:
    out: dict[str, Any] = {"loop_overhead": await loop_overhead(), "bare_loop": await bare_loop()}
    for name, make in (("inproc", local), ("stdio", stdio)):
        src = make()
        async with ToolBox([src]):  # warm: spawn and first call outside the measurement
            pass
        out[f"parallel_{name}"] = [await parallel(make(), n) for n in (16, 64)]
    return out


def run() -> dict[str, Any]:
    return anyio.run(_all)


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
