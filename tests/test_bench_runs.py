"""`make bench` stays runnable: each quick benchmark, run as bench/run.py runs it, measures every figure it reports
(a benchmark that drifted from the code, as tokens_bench and code_mode_bench once did, fails here, not on the day
the figures are wanted). The slow ones (peers, tracing, the servers, chaos, scale, fleet) have tests of their own
parts beside this file."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from bench.loop_pair import SEED_REV
from bench.run import MODULES  # bench/ is on pytest's pythonpath

REPO = Path(__file__).resolve().parents[1]
QUICK = ["loop_bench", "loop_pair", "store_bench", "prompt_cache", "tokens_bench", "code_mode_bench", "context_bench"]


@pytest.mark.parametrize("module", QUICK)
def test_a_quick_benchmark_runs_to_its_figures(module: str, tmp_path: Path) -> None:
    assert module in dict(MODULES)
    if module == "loop_pair" and subprocess.run(["git", "cat-file", "-e", SEED_REV], cwd=REPO).returncode != 0:
        pytest.skip(f"a shallow clone: git has no {SEED_REV}, the seed tree loop_pair measures against")
    out = tmp_path / "RESULTS.md"
    done = subprocess.run(
        [sys.executable, "-m", "bench.run", "--only", module, "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = out.read_text()
    assert "Not measured" not in report and "| ratio |" in report, report[-2000:]
    raw = report.split("```json", 1)[1].split("```", 1)[0]
    assert json.loads(raw), report[-2000:]
