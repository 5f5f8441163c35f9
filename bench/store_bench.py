"""What a durable save costs per step: the same 10-step scripted run with the SQLite run store against without
one, next to a bare sqlite3 write of the same bytes (the JSON of each step's state, one UPDATE and one commit,
WAL and synchronous=FULL as the store uses) in the same process, on the same disk.

`python -m bench.store_bench` prints the figures; `run()` returns them for bench/run.py.
"""

import json
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from bench.loop_bench import echo_forever, local

from toolwire_client import Agent, RunLimits, RunState, ScriptedModel, ToolBox, open_store
from toolwire_shared.usage import Usage

STEPS = 10


async def one_run(db: str | None, bodies: list[str] | None = None) -> tuple[float, int]:
    """Seconds for one run and how many saves it made (the state's version); `bodies` collects the JSON of the
    state after each step (what a save writes)."""

    def on_step(state: RunState, *_: Any) -> None:
        if bodies is not None:
            bodies.append(state.model_dump_json())

    model = ScriptedModel(echo_forever, usage_fn=lambda n, messages: Usage(input_tokens=100, output_tokens=10))
    store = await open_store(db) if db else None
    try:
        async with ToolBox([local()]) as box:
            agent = Agent.of(model, box, limits=RunLimits(max_steps=STEPS), on_step=on_step, store=store)
            started = time.perf_counter()
            state = await agent.run("bench")
            return time.perf_counter() - started, state.version
    finally:
        if store is not None:
            await store.aclose()


def bare_writes(path: Path, bodies: list[str]) -> float:
    """The floor: the same bytes written as the store writes them, without its checks, thread hop or schema."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, state TEXT)")
    conn.execute("INSERT OR REPLACE INTO runs VALUES ('r', '')")
    started = time.perf_counter()
    for body in bodies:
        conn.execute("BEGIN")
        conn.execute("UPDATE runs SET state = ? WHERE run_id = 'r'", (body,))
        conn.execute("COMMIT")
    took = time.perf_counter() - started
    conn.close()
    return took


def run(runs: int = 30) -> dict[str, Any]:
    async def measure() -> dict[str, list[float]]:
        samples: dict[str, list[float]] = {"none": [], "sqlite": [], "bare": [], "saves": []}
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(runs):
                bodies: list[str] = []
                samples["none"].append((await one_run(None, bodies))[0])
                took, saves = await one_run(str(Path(tmp) / "runs.sqlite3"))
                samples["sqlite"].append(took)
                samples["saves"].append(saves)
                samples["bare"].append(bare_writes(Path(tmp) / f"bare-{i % 2}.sqlite3", bodies))
        return samples

    samples = anyio.run(measure)
    none, sqlite, bare = (statistics.median(samples[k]) for k in ("none", "sqlite", "bare"))
    saves = statistics.median(samples["saves"])  # before a turn's calls are sent, after each step, at the end
    per_save_us, bare_us = (sqlite - none) / saves * 1e6, bare / STEPS * 1e6
    figures = [
        {
            "name": f"durable save, SQLite run store (WAL, synchronous=FULL; {saves:g} saves per {STEPS}-step run)",
            "value": round(per_save_us, 1),
            "unit": "µs",
            "reference": "bare sqlite3 UPDATE + COMMIT of the same bytes",
            "reference_value": round(bare_us, 1),
        }
    ]
    medians = {"none": none * 1e3, "sqlite": sqlite * 1e3}
    return {"figures": figures, "runs": runs, "saves_per_run": saves, "median_run_ms": medians}


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
