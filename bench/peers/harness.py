"""The scripted 10-step run every framework's bench script runs, and how it is timed: stdlib only, so it imports the
same in toolwire's .venv and in each peer's venv.

The run: the model asks for one `echo(text="step i")` call per step for 9 steps, then answers "done" (10 model calls
= 10 steps). Each script builds its framework's agent once per variant, the tool in-process and over ONE stdio MCP
server started before timing and reused for every run, then `measure()` times whole runs: warm-up runs first (these
also check that each echo came back), then `runs` timed runs; the figure is the median run time / 10 steps.

    python bench/peers/<framework>_run.py --server '["python", "-m", "toolwire_server", ...]' [--runs N] [--warmup N]
"""

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

STEPS = 10
TOOL_STEPS = STEPS - 1
FINAL = "done"


@dataclass
class Script:
    """The scripted model's state for one run: which call this is, and whether to check the previous echo."""

    check: bool = False
    calls: int = 0
    seen: list[str] = field(default_factory=list)

    def next(self) -> int | None:
        """The echo index to ask for at this call, or None for the final answer."""
        i = self.calls
        self.calls += 1
        return i if i < TOOL_STEPS else None

    def saw(self, previous: str) -> None:
        """In check mode, record what the framework handed back as the previous tool result."""
        if self.check and self.calls > 0:
            self.seen.append(previous)

    def verify(self, output: object) -> None:
        if self.calls != STEPS or output != FINAL:
            raise AssertionError(f"run made {self.calls} model calls and answered {output!r}")
        if self.check:
            missing = [i for i in range(TOOL_STEPS) if f"step {i}" not in self.seen[i]]
            if len(self.seen) != TOOL_STEPS or missing:
                raise AssertionError(f"echo results missing for steps {missing}: {self.seen!r}")


def echo_text(i: int) -> str:
    return f"step {i}"


RunOnce = Callable[[Script], Awaitable[object]]
Variant = Callable[[list[str]], Any]  # server argv -> async context manager yielding a RunOnce


async def measure(run_once: RunOnce, runs: int, warmup: int) -> dict[str, float]:
    for _ in range(warmup):
        script = Script(check=True)
        script.verify(await run_once(script))
    per_step: list[float] = []
    for _ in range(runs):
        script = Script()
        started = time.perf_counter()
        output = await run_once(script)
        elapsed = time.perf_counter() - started
        script.verify(output)
        per_step.append(elapsed / STEPS * 1e6)
    per_step.sort()
    return {
        "runs": runs,
        "warmup": warmup,
        "steps": STEPS,
        "per_step_us": statistics.median(per_step),
        "per_step_us_p10": per_step[len(per_step) // 10],
        "per_step_us_p90": per_step[len(per_step) * 9 // 10],
    }


def main(framework: str, version: str, variants: dict[str, Variant]) -> None:
    """Parse the bench arguments, time each variant, print one JSON object."""
    parser = argparse.ArgumentParser(description=f"{framework}: the scripted 10-step run, per-step time")
    parser.add_argument("--server", required=True, help="JSON argv of the stdio MCP server (echo tool)")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--only", nargs="*", choices=sorted(variants))
    options = parser.parse_args()
    server = json.loads(options.server)  # relative paths in it are relative to this process's cwd

    async def all_variants() -> dict[str, Any]:
        out: dict[str, Any] = {"framework": framework, "version": version}
        for name, variant in variants.items():
            if options.only and name not in options.only:
                continue
            async with variant(server) as run_once:  # the stdio server starts here, outside the timing
                out[name] = await measure(run_once, options.runs, options.warmup)
        return out

    print(json.dumps(asyncio.run(all_variants())))
