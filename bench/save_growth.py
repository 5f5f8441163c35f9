"""Whether a durable save grows with the run: the per-step save cost of a 300-step scripted run on the SQLite run
store, last 50 steps against the first 50, in CPU time (process CPU while the save runs: the loop waits for it, so
that is the save's own; a shared machine's fsync waits, which vary tenfold between rounds, are not in it) and in wall
time, next to the same ratio for a whole-state rewrite of the same states (a bare
sqlite3 UPDATE of the state's JSON, one commit, WAL and synchronous=FULL as the store uses: what a save was before
store/layout.py), in the same process on the same disk.

`python -m bench.save_growth` prints the figures; `run()` returns them for bench/run.py.
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
from toolwire_client.store import SqlRunStore
from toolwire_shared.usage import Usage

STEPS, EDGE = 300, 50


class TimedStore:
    """The store's save, timed (CPU and wall time of each save, with the state's step count when it was made)."""

    def __init__(self, inner: SqlRunStore) -> None:
        self.inner, self.saves = inner, list[tuple[int, float, float]]()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def save(self, state: RunState, owner: str | None = None) -> None:
        cpu, wall = time.process_time(), time.perf_counter()
        await self.inner.save(state, owner)
        self.saves.append((len(state.steps), time.process_time() - cpu, time.perf_counter() - wall))


def per_step(saves: list[tuple[int, float]]) -> tuple[float, float]:
    """Median save time per step (all saves made at that step count) over the first and the last EDGE steps, in µs
    (the median: other work on a shared machine lands on a few steps)."""
    by_step: dict[int, float] = {}
    for steps, took in saves:
        by_step[steps] = by_step.get(steps, 0.0) + took
    first = [by_step.get(i, 0.0) for i in range(1, EDGE + 1)]
    last = [by_step.get(i, 0.0) for i in range(STEPS - EDGE + 1, STEPS + 1)]
    return statistics.median(first) * 1e6, statistics.median(last) * 1e6


async def one_run(db: Path) -> tuple[list[tuple[int, float, float]], list[tuple[int, str]]]:
    """The store's timed saves, and the state's JSON at each save (what a whole-state rewrite writes)."""
    bodies: list[tuple[int, str]] = []
    store = TimedStore(await open_store(str(db)))

    def on_step(state: RunState, *_: Any) -> None:
        bodies.append((len(state.steps), state.model_dump_json()))

    model = ScriptedModel(echo_forever, usage_fn=lambda n, messages: Usage(input_tokens=100, output_tokens=10))
    try:
        async with ToolBox([local()]) as box:
            agent = Agent.of(model, box, limits=RunLimits(max_steps=STEPS), on_step=on_step, store=store)  # type: ignore[arg-type]
            await agent.run("bench")
    finally:
        await store.aclose()
    return store.saves, bodies


def rewrites(path: Path, bodies: list[tuple[int, str]]) -> list[tuple[int, float, float]]:
    """The reference: each state made JSON and written whole, as a save was before store/layout.py (twice per step,
    as the loop saves twice per step)."""
    states = [(steps, RunState.model_validate_json(body)) for steps, body in bodies]
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE runs (run_id TEXT PRIMARY KEY, state TEXT)")
    conn.execute("INSERT INTO runs VALUES ('r', '')")
    timed = []
    for steps, state in states:
        for _ in range(2):
            cpu, wall = time.process_time(), time.perf_counter()
            conn.execute("BEGIN")
            conn.execute("UPDATE runs SET state = ? WHERE run_id = 'r'", (state.model_dump_json(),))
            conn.execute("COMMIT")
            timed.append((steps, time.process_time() - cpu, time.perf_counter() - wall))
    conn.close()
    return timed


def run(rounds: int = 5) -> dict[str, Any]:
    async def measure() -> list[dict[str, float]]:
        out = []
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(rounds):
                saves, bodies = await one_run(Path(tmp) / f"runs-{i}.db")
                reference = rewrites(Path(tmp) / f"bare-{i}.db", bodies)
                row: dict[str, float] = {}
                for kind, at in (("cpu", 1), ("wall", 2)):
                    first, last = per_step([(s[0], s[at]) for s in saves])
                    ref_first, ref_last = per_step([(s[0], s[at]) for s in reference])
                    row |= {f"{kind}_first": first, f"{kind}_last": last, f"{kind}_ratio": last / first}
                    row |= {f"{kind}_ref_first": ref_first, f"{kind}_ref_last": ref_last}
                    row[f"{kind}_ref_ratio"] = ref_last / ref_first
                out.append(row)
        return out

    rounds_out = anyio.run(measure)
    median = {k: statistics.median(r[k] for r in rounds_out) for k in rounds_out[0]}
    figures = []
    for kind, what in (("cpu", "CPU"), ("wall", "wall time")):
        figures.append(
            {
                "name": f"{STEPS}-step run, SQLite run store: save {what} per step, last {EDGE} steps / first {EDGE}",
                "value": round(median[f"{kind}_ratio"], 2),  # each a same-round ratio
                "unit": "x",
                "reference": "same states made JSON and rewritten whole (a bare sqlite3 UPDATE + COMMIT), last / first",
                "reference_value": round(median[f"{kind}_ref_ratio"], 2),
            }
        )
    figures.append(
        {
            "name": f"{STEPS}-step run, SQLite run store: save CPU per step, last {EDGE} steps",
            "value": round(median["cpu_last"], 1),
            "unit": "µs",
            "reference": "same states made JSON and rewritten whole, last 50 steps",
            "reference_value": round(median["cpu_ref_last"], 1),
        }
    )
    return {"figures": figures, "rounds": rounds_out, "steps": STEPS, "edge": EDGE}


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
