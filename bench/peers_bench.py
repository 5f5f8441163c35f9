"""toolwire's loop step next to Pydantic AI's and the OpenAI Agents SDK's, all measured in the same run.

Every framework runs the same scripted 10-step run (bench/peers/harness.py) in a subprocess of its own venv: toolwire
in this one, each peer in a pinned venv built once under a cache dir (bench/peers/venvs.py); a peer whose venv
cannot be built is reported as skipped, with the reason. Two variants: the echo tool in-process, and over one stdio
MCP server (toolwire's server on bench/echo_servers.py, the same command for everyone) that each framework starts
once, before timing. Rounds are interleaved so a burst of load on the shared machine hits every framework; a figure
is the median over rounds of each round's median per-step time. Figure = toolwire, reference = the peer: a ratio
below 1 means toolwire's step is cheaper.

    python -m bench.peers_bench [--runs N] [--warmup N] [--rounds N]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.peers import venvs
from bench.run import figure

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "bench" / "peers"
ECHO = "bench/echo_servers.py"
VARIANTS = {"inproc": "echo as an in-process function tool", "stdio": "echo over one shared stdio MCP server"}
LABELS = {"toolwire": "toolwire", "pydantic_ai": "Pydantic AI", "agents_sdk": "OpenAI Agents SDK"}
RUN_TIMEOUT_S = 600


class RunFailed(Exception):
    """A framework's bench script failed or hung: a peer is then skipped, toolwire fails the module."""


def server_argv() -> list[str]:
    """toolwire's stdio server on the bench echo registry, run by toolwire's python: the same for every framework."""
    return [sys.executable, "-m", "toolwire_server", f"{ECHO}:registry", "--stdio", "--log-level", "ERROR"]


def measure(framework: str, python: Path, runs: int, warmup: int) -> dict[str, Any]:
    """One round of one framework: both variants, in a fresh process of its venv. Returns the script's JSON."""
    argv = [str(python), str(SCRIPTS / f"{framework}_run.py"), "--server", json.dumps(server_argv())]
    argv += ["--runs", str(runs), "--warmup", str(warmup)]
    try:
        done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as exc:
        raise RunFailed(f"the run took more than {RUN_TIMEOUT_S} s") from exc
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        raise RunFailed(f"its run exited {done.returncode}: {lines[-1] if lines else 'no output'}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def pythons() -> tuple[dict[str, Path], dict[str, str]]:
    """The python of each framework's venv (building a peer's venv if needed), and the peers skipped, with why."""
    found = {"toolwire": Path(sys.executable)}
    skipped: dict[str, str] = {}
    for peer in venvs.PEERS:
        try:
            found[peer] = venvs.ensure(peer)
        except venvs.PeerUnavailable as exc:
            skipped[peer] = str(exc)
    return found, skipped


def summarize(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"version": rounds[0]["version"]}
    for variant in VARIANTS:
        medians = [r[variant]["per_step_us"] for r in rounds]
        out[variant] = {
            "per_step_us": statistics.median(medians),
            "per_step_us_by_round": medians,
            "per_step_us_p90": statistics.median(r[variant]["per_step_us_p90"] for r in rounds),
        }
    return out


def figures(results: dict[str, Any]) -> list[dict[str, Any]]:
    ours = results["toolwire"]
    out = []
    for variant, what in VARIANTS.items():
        for peer in venvs.PEERS:
            if peer in results:
                theirs = results[peer]
                out.append(
                    figure(
                        f"10-step scripted run, {what}: toolwire per step (ratio < 1: toolwire cheaper)",
                        ours[variant]["per_step_us"],
                        "µs",
                        f"{LABELS[peer]} {theirs['version']}, same run, per step",
                        theirs[variant]["per_step_us"],
                    )
                )
    return out


def run(runs: int = 200, warmup: int = 20, rounds: int = 3) -> dict[str, Any]:
    """Per framework and round: `warmup` checked runs, then `runs` timed runs of each variant."""
    load_before = os.getloadavg()
    found, skipped = pythons()
    per_round: dict[str, list[dict[str, Any]]] = {name: [] for name in found}
    for _ in range(rounds):
        for name, python in found.items():
            if name in skipped:
                continue
            try:
                per_round[name].append(measure(name, python, runs, warmup))
            except RunFailed as exc:
                if name == "toolwire":
                    raise
                skipped[name] = str(exc)
    results = {name: summarize(done) for name, done in per_round.items() if done and name not in skipped}
    return {
        "runs": runs,
        "warmup": warmup,
        "rounds": rounds,
        "steps_per_run": 10,
        "load_average": {"before": list(load_before), "after": list(os.getloadavg())},
        "results": results,
        "skipped": skipped,
        "notes": [f"{LABELS[name]} not measured: {why}" for name, why in skipped.items()],
        "figures": figures(results),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    print(json.dumps(run(options.runs, options.warmup, options.rounds), indent=2))
