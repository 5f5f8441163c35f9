"""The fleet bench's figures (bench/fleet_bench.py), each beside the reference it is read against: the batches' JSON
in, the rows bench/run.py and bench/RESULTS.md show out."""

from typing import Any

from bench.loopback_model import CALLS_PER_RUN


def figure(name: str, value: float, unit: str, reference: str, reference_value: float) -> dict[str, Any]:
    return {"name": name, "value": value, "unit": unit, "reference": reference, "reference_value": reference_value}


def figures(
    one: dict[str, Any],
    three: dict[str, Any],
    killed: dict[str, Any],
    clients: dict[str, float],
    alone: dict[str, Any],
    *,
    concurrency: int,
    takeover_bound_s: float,
) -> list[dict[str, Any]]:
    """The batches' figures, each beside its reference: `concurrency`, the runs one worker drives at once;
    `takeover_bound_s`, what a dead worker's runs should wait at most (DEAD_S + BEAT_S + queue polling)."""
    n = three["runs"]
    kill = killed.get("killed") or {}
    out = [
        figure(
            "CPU to make an HTTP client (a model adapter's, an MCP source's; twice per run)",
            clients["toolwire"],
            "ms",
            "httpx2.AsyncClient() with its own TLS context",
            clients["plain"],
        ),
        figure("3 workers: runs/s", three["runs_per_s"], "runs/s", "1 worker", one["runs_per_s"]),
        figure(
            "3 workers: loop steps per CPU-second of the fleet's processes",
            three["steps_per_cpu_s"],
            "steps",
            "1 worker",
            one["steps_per_cpu_s"],
        ),
        figure(
            "3 workers: run latency p50, taken from the queue to end",
            three["driven_latency_ms"]["p50"],
            "ms",
            f"the bare model latency x {CALLS_PER_RUN} calls per run",
            three["model_floor_ms"],
        ),
        figure(
            "3 workers: run latency p99, submit to end (includes the queue wait)",
            three["latency_ms"]["p99"],
            "ms",
            "same, p50",
            three["latency_ms"]["p50"],
        ),
        figure(
            "1 worker: run latency p50, taken from the queue to end",
            one["driven_latency_ms"]["p50"],
            "ms",
            f"the bare model latency x {CALLS_PER_RUN} calls per run",
            one["model_floor_ms"],
        ),
        figure(
            "3 workers, one killed -9 midway: runs/s",
            killed["runs_per_s"],
            "runs/s",
            "3 workers, none killed",
            three["runs_per_s"],
        ),
        figure("3 workers, one killed -9 midway: runs ended done", killed["done"], "runs", "runs submitted", n),
        figure(
            "takeover: first of the killed worker's runs restarted elsewhere, after the kill",
            kill.get("first_restart_s") or float("nan"),
            "s",
            "the bound DEAD_S + BEAT_S + queue polling (defaults)",
            takeover_bound_s,
        ),
        figure(
            "takeover: last of them, after waiting for a free slot on the busy survivors",
            kill.get("takeover_s") or float("nan"),
            "s",
            "the first",
            kill.get("first_restart_s") or float("nan"),
        ),
        figure(
            "3 workers: peak connections to PostgreSQL (DBOS's pools and the run stores')",
            three.get("peak_connections", float("nan")),
            "connections",
            f"runs driven at once (3 x --concurrency {concurrency})",
            3 * concurrency,
        ),
        figure(
            "3 workers: rows written per loop step, all tables",
            three["writes_per_step_total"],
            "rows",
            "1 worker",
            one["writes_per_step_total"],
        ),
    ]
    no_fleet = "the same runs driven in one process on the same PostgreSQL store, no fleet"
    for what, unit, fleet_value, alone_value in (
        (
            "CPU per loop step, the worker process",
            "ms",
            one["cpu_ms_per_step"]["workers"],
            alone["cpu_ms_per_step"]["process"],
        ),
        (
            "CPU per loop step, PostgreSQL",
            "ms",
            one["cpu_ms_per_step"]["postgres"],
            alone["cpu_ms_per_step"]["postgres"],
        ),
        (
            "rows written per loop step, all tables",
            "rows",
            one["writes_per_step_total"],
            alone["writes_per_step_total"],
        ),
    ):
        out.append(figure(f"1 worker: {what}", fleet_value, unit, no_fleet, alone_value))
    for part, label in (("workers", "worker processes"), ("tool_server", "tool server"), ("postgres", "PostgreSQL")):
        out.append(
            figure(
                f"3 workers: CPU per loop step, {label}",
                three["cpu_ms_per_step"][part],
                "ms",
                "same, 1 worker",
                one["cpu_ms_per_step"][part],
            )
        )
    return out
