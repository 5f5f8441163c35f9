"""`python -m bench.run` (what `make bench` runs): every benchmark of the project, one report.

Runs each module's `run()` in turn and writes bench/RESULTS.md: the machine, the date, and each figure next to its
reference measured in the same run, as a ratio. A module may return `figures` (name, value, unit, reference,
reference_value) itself; for the ones that return their own shape, an extractor below picks the figures out.
Hand-written notes already in RESULTS.md, outside the generated block, are kept.
"""

import argparse
import importlib
import json
import os
import platform
import sys
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
BEGIN, END = "<!-- bench/run.py: begin -->", "<!-- bench/run.py: end -->"

Figure = dict[str, Any]

# Name, what it measures, and its reference. Run cheapest first so a failure late still leaves figures.
MODULES: list[tuple[str, str]] = [
    ("loop_bench", "agent loop: overhead per step, parallel efficiency of one turn's tool calls"),
    ("loop_pair", "agent loop: the step against the seed's bare loop as it was when issue 34 set its 12x target"),
    ("peers_bench", "agent loop next to Pydantic AI and the OpenAI Agents SDK: the same scripted 10-step run"),
    ("tracing_bench", "tracing: a run with OpenTelemetry export on vs off"),
    ("server_bench", "tool server: toolwire vs plain MCPServer vs the raw pipe floor, stdio and HTTP"),
    ("store_bench", "durable saves: a run with the SQLite store vs without, next to bare sqlite3 writes"),
    ("save_growth", "durable saves over a long run: a 300-step run's save per step, last 50 steps vs first 50"),
    ("prompt_cache", "prompt caching: the seed's 10-step run's input cost through the Anthropic adapter"),
    ("tokens_bench", "tool search: tool-definition and input tokens per task, on vs off, 52 and 500 tools (tiktoken)"),
    ("code_mode_bench", "code mode: a 20-order fan-out as one script vs plain tool calling; a script's CPU cost"),
    ("code_mode_chaos", "code mode killed -9 at 10 seeded points mid-script and resumed; an approval mid-script"),
    ("context_bench", "context budget: a 200-step run of ~20 kB results, peak and total input vs unmanaged"),
    ("context_native_bench", "context budget kept by Anthropic's own context editing and compaction vs toolwire's"),
    ("scale_bench", "scale: 10,000 concurrent scripted runs on one shared connection to one HTTP tool server"),
    ("fleet_bench", "fleet: 2,000 runs on 1 and 3 `toolwire worker` processes on PostgreSQL, and one killed -9"),
    (
        "local_search_bench",
        "tool search with a real tiny local model (SmolLM2-135M, .venv-llm): tasks right, on vs off",
    ),
]


def figure(name: str, value: float, unit: str, reference: str, reference_value: float) -> Figure:
    return {"name": name, "value": value, "unit": unit, "reference": reference, "reference_value": reference_value}


def server_figures(data: dict[str, Any]) -> list[Figure]:
    results = data["results"]
    out: list[Figure] = []
    labels = {
        "seq_median_us": ("sequential call, median", "µs"),
        "seq_calls_s": ("sequential calls", "calls/s"),
        "c16_calls_s": ("16 in flight", "calls/s"),
        "c64_calls_s": ("64 in flight", "calls/s"),
        "server_cpu_us_per_call": ("server CPU per call", "µs"),
    }
    for transport in ("stdio", "http"):
        ours, ref = results[f"{transport}/toolwire"], results[f"{transport}/mcpserver"]
        for key, (label, unit) in labels.items():
            out.append(figure(f"{transport}: {label}", ours[key], unit, "plain MCPServer, same client", ref[key]))
    floor = results.get("stdio/raw-pipe")
    if floor:
        out.append(
            figure(
                "stdio: sequential call, median",
                results["stdio/toolwire"]["seq_median_us"],
                "µs",
                "raw NDJSON pipe (the floor)",
                floor["seq_median_us"],
            )
        )
        ours = results.get("stdio/toolwire-mcpsource")
        if ours:
            out.append(
                figure(
                    "stdio through McpSource (a run's path): sequential call, median",
                    ours["seq_median_us"],
                    "µs",
                    "raw NDJSON pipe (the floor)",
                    floor["seq_median_us"],
                )
            )
        alone = results.get("stdio/toolwire-raw-client")
        if alone:
            for key, label, unit in (
                ("seq_median_us", "sequential call, median", "µs"),
                ("server_cpu_us_per_call", "server CPU per call", "µs"),
            ):
                if not floor[key]:  # the floor's CPU can be under one clock tick for the whole phase: no ratio
                    continue
                out.append(
                    figure(
                        f"stdio, the server alone (raw client): {label}",
                        alone[key],
                        unit,
                        "raw NDJSON pipe, same client (the floor)",
                        floor[key],
                    )
                )
    return out


def loop_figures(data: dict[str, Any]) -> list[Figure]:
    overhead, bare = data["loop_overhead"], data.get("bare_loop")
    if bare:
        out = [
            figure(
                "loop step, scripted model and in-process tool, median",
                overhead["median_us"],
                "µs",
                "the seed's bare loop, same script and tool",
                bare["median_us"],
            ),
            figure(
                "same, median over the last half (longer message list)",
                overhead["median_us_last_half"],
                "µs",
                "the seed's bare loop, last half",
                bare["median_us_last_half"],
            ),
        ]
    else:
        out = [
            figure(
                "loop step, in-process tool, median over the last half",
                overhead["median_us_last_half"],
                "µs",
                "same, median over the whole run",
                overhead["median_us"],
            )
        ]
    for transport in ("inproc", "stdio"):
        for row in data.get(f"parallel_{transport}", []):
            sleep_ms = row["step_s"] / row["ratio"] * 1000
            out.append(
                figure(
                    f"{row['calls']} parallel sleeping calls, {transport}: step time",
                    row["step_s"] * 1000,
                    "ms",
                    "one call's sleep (perfect parallelism = 1.0)",
                    sleep_ms,
                )
            )
    return out


def tracing_figures(data: dict[str, Any]) -> list[Figure]:
    out: list[Figure] = []
    for transport in ("inproc", "provider", "stdio"):
        row = data.get(transport)
        if isinstance(row, dict) and "on_median_ms" in row:
            what = {
                "inproc": "scripted model, in-process tool",
                "provider": "OpenAI adapter to a loopback provider",
                "stdio": "scripted model, stdio tool server",
            }[transport]
            out.append(
                figure(
                    f"10-step run with tracing on ({what}), median",
                    row["on_median_ms"],
                    "ms",
                    "same run, tracing off",
                    row["off_median_ms"],
                )
            )
            if "bare_spans_per_step_us" in row and "sdk_per_step_overhead_us" in row:
                out.append(
                    figure(
                        f"tracing per step, spans made and batched ({what})",
                        row["sdk_per_step_overhead_us"],
                        "µs",
                        f"bare OpenTelemetry SDK, as many spans and attributes ({row['spans_per_run']:g} per run)",
                        row["bare_spans_per_step_us"],
                    )
                )
            if "spans_median_ms" in row:
                out.append(
                    figure(
                        f"same, spans made but not processed ({what})",
                        row["spans_median_ms"],
                        "ms",
                        "same run, tracing off",
                        row["off_median_ms"],
                    )
                )
    return out


EXTRACTORS: dict[str, Callable[[dict[str, Any]], list[Figure]]] = {
    "server_bench": server_figures,
    "loop_bench": loop_figures,
    "tracing_bench": tracing_figures,
}


def figures_of(name: str, data: dict[str, Any]) -> list[Figure]:
    if isinstance(data.get("figures"), list):
        return list(data["figures"])
    extractor = EXTRACTORS.get(name)
    return extractor(data) if extractor else []


def machine() -> dict[str, str]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "n/a"
    return {
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "python": platform.python_version(),
        "mcp": metadata.version("mcp"),
        "os": f"{platform.system()} {platform.release()}",
        "load average at start": load,
    }


def _num(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.3g}"


def render(info: dict[str, str], started: datetime, sections: list[dict[str, Any]], total_s: float) -> str:
    lines = [
        BEGIN,
        "# Benchmark results",
        "",
        f"Generated by `make bench` (`python -m bench.run`) on {started:%Y-%m-%d %H:%M} UTC in {total_s:.0f} s.",
        "Each figure is shown next to its reference, measured in the same run on the same machine; the ratio is "
        "figure / reference.",
        "",
        "| machine | |",
        "|---|---|",
    ]
    lines += [f"| {key} | {value} |" for key, value in info.items()]
    for section in sections:
        lines += ["", f"## {section['title']} (`bench/{section['module']}.py`, {section['seconds']:.0f} s)", ""]
        if section.get("error"):
            lines += [f"Not measured: {section['error']}"]
            continue
        figs = section["figures"]
        if figs:
            lines += ["| figure | value | reference | reference value | ratio |", "|---|---:|---|---:|---:|"]
            for f in figs:
                ratio = f["value"] / f["reference_value"] if f["reference_value"] else float("nan")
                lines.append(
                    f"| {f['name']} | {_num(f['value'])} {f['unit']} | {f['reference']} | "
                    f"{_num(f['reference_value'])} {f['unit']} | {ratio:.2f} |"
                )
        if notes := section["data"].get("notes"):  # e.g. a peer that could not be measured, and why
            lines += ["", *(f"- {note}" for note in notes)]
        lines += [
            "",
            "<details><summary>raw figures</summary>",
            "",
            "```json",
            json.dumps(section["data"], indent=1, default=str),
            "```",
            "",
            "</details>",
        ]
    lines.append(END)
    return "\n".join(lines) + "\n"


def write(report: str, path: Path = RESULTS) -> None:
    """Replace the generated block; keep whatever people wrote around it."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if BEGIN in old and END in old:
        before, rest = old.split(BEGIN, 1)
        after = rest.rsplit(END, 1)[1]  # the last: a stray marker left inside the block is replaced with it
        path.write_text(before + report.rstrip("\n") + after, encoding="utf-8")
    elif old.strip():
        path.write_text(
            report + "\n## Notes from earlier runs\n\n" + old.replace("# Benchmark results", "", 1).lstrip("\n"),
            encoding="utf-8",
        )
    else:
        path.write_text(report, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run every benchmark and write bench/RESULTS.md.")
    parser.add_argument("--only", nargs="*", help="Module names to run (default: all).")
    parser.add_argument("--out", type=Path, default=RESULTS)
    options = parser.parse_args(argv)
    started, clock = datetime.now(UTC), time.perf_counter()
    info = machine()
    sections: list[dict[str, Any]] = []
    for module, title in MODULES:
        if options.only and module not in options.only:
            continue
        print(f"[bench] {module} ...", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        section: dict[str, Any] = {"module": module, "title": title, "figures": [], "data": {}}
        try:
            data = importlib.import_module(f"bench.{module}").run()
            section["data"], section["figures"] = data, figures_of(module, data)
        except Exception as exc:  # one broken benchmark must not lose the others' figures
            traceback.print_exc()
            section["error"] = f"{type(exc).__name__}: {exc}"
        section["seconds"] = time.perf_counter() - t0
        print(f"[bench] {module} done in {section['seconds']:.0f} s", file=sys.stderr, flush=True)
        sections.append(section)
    write(render(info, started, sections, time.perf_counter() - clock), options.out)
    print(f"[bench] wrote {options.out}", file=sys.stderr)
    return 1 if any(s.get("error") for s in sections) else 0


if __name__ == "__main__":
    sys.exit(main())
