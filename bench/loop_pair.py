"""The loop step of two trees, alternating in one session, next to the seed's bare loop of a third: what a change to
the loop costs or saves, measured as loop_bench measures it, while the machine's load moves under both.

    python -m bench.loop_pair --base BASE_TREE --seed SEED_TREE [--rounds 5] [--runs 11]

Each tree is a checkout (`git archive REV | tar -x -C DIR`); this one is the tree the module is run from. A round
runs, each in a fresh process: `--base`'s loop_overhead, this tree's, and `--seed`'s bare_loop (the seed's bare loop
is the pydantic-message loop of a483c4a, the reference the 12x target of issue 34 was set against); each figure is
the median of `--runs` medians of 100-step runs after two warm-up runs. Prints one line a round.

`run()` (bench/run.py) measures this tree against SEED_REV's bare loop, taken from git: loop_bench's own table
compares with a bare loop on today's records, which got faster with them, so it does not show that target.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
SEED_REV = "a483c4a"
"""The tree whose bare loop (pydantic messages, 4.09 µs then) issue 34's 12x target was set against."""
ONE = """
import anyio, json, statistics, sys
from bench import loop_bench
async def main():
    fn = loop_bench.loop_overhead if sys.argv[1] == "loop" else loop_bench.bare_loop
    for _ in range(2):
        await fn(100)
    print(json.dumps(statistics.median([(await fn(100))["median_us"] for _ in range(int(sys.argv[2]))])))
anyio.run(main)
"""


def median_us(tree: Path, what: str, runs: int) -> float:
    """One figure of `tree`, in its own process with only its packages on the path."""
    path = os.pathsep.join(str(tree / part) for part in ("server", "client", "shared", "otel", "."))
    env = {**os.environ, "PYTHONPATH": path}
    done = subprocess.run(
        [sys.executable, "-c", ONE, what, str(runs)], cwd=tree, env=env, capture_output=True, text=True, check=True
    )
    return float(done.stdout.strip().splitlines()[-1])


def run(rounds: int = 5, runs: int = 11) -> dict[str, Any]:
    """This tree's loop step and SEED_REV's bare loop, alternating; skipped where git does not have SEED_REV (a
    shallow clone)."""
    with tempfile.TemporaryDirectory(prefix="toolwire-seed-") as seed:
        archive = subprocess.run(["git", "archive", SEED_REV], cwd=HERE, capture_output=True)
        if archive.returncode != 0:  # shown as a note, as local_search_bench's skip is
            why = f"skipped: git has no {SEED_REV} here ({archive.stderr.decode().strip()})"
            return {"figures": [], "notes": [why], "skipped": why}
        subprocess.run(["tar", "-x", "-C", seed], input=archive.stdout, check=True)
        pairs = [(median_us(HERE, "loop", runs), median_us(Path(seed), "bare", runs)) for _ in range(rounds)]
    step, bare = statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)
    ratios = sorted(this / seed_bare for this, seed_bare in pairs)
    figure = {
        "name": f"loop step, scripted model and in-process tool, median of {rounds} rounds",
        "value": round(step, 1),
        "unit": "µs",
        "reference": f"the seed's bare loop at {SEED_REV} (pydantic messages: what issue 34's 12x was set against)",
        "reference_value": round(bare, 2),
    }
    return {"figures": [figure], "rounds": [list(p) for p in pairs], "ratio_range": [ratios[0], ratios[-1]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, required=True, help="the tree to compare with (main)")
    parser.add_argument("--seed", type=Path, required=True, help="the tree whose bare_loop is the reference")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    for _ in range(args.rounds):
        base = median_us(args.base, "loop", args.runs)
        this = median_us(HERE, "loop", args.runs)
        bare = median_us(args.seed, "bare", args.runs)
        print(
            f"base {base:6.1f} us ({base / bare:5.1f}x)  this {this:6.1f} us ({this / bare:5.1f}x)  "
            f"seed bare {bare:5.2f} us  this/base {this / base:.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
