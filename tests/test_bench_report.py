"""bench/run.py's report: ratios to same-run references, and hand-written notes kept across regenerations."""

from datetime import UTC, datetime
from pathlib import Path

from bench.run import BEGIN, END, figure, figures_of, machine, render, write  # bench/ is on pytest's pythonpath


def section(figs: list[dict[str, object]]) -> dict[str, object]:
    return {"module": "scale_bench", "title": "scale", "seconds": 3.0, "figures": figs, "data": {"x": 1}}


def test_report_shows_each_figure_with_its_reference_and_ratio() -> None:
    figs = [figure("step latency, median", 30.0, "ms", "one run alone, median", 10.0)]
    text = render(machine(), datetime(2026, 12, 2, tzinfo=UTC), [section(figs)], 12.0)
    assert "| step latency, median | 30 ms | one run alone, median | 10 ms | 3.00 |" in text
    assert "| cores |" in text and "| mcp | 2.3" in text and "2026-12-02" in text
    broken = render(
        machine(),
        datetime(2026, 12, 2, tzinfo=UTC),
        [{**section([]), "error": "RuntimeError: server did not start"}],
        1.0,
    )
    assert "Not measured: RuntimeError: server did not start" in broken


def test_server_bench_shape_becomes_figures_against_mcpserver_and_the_pipe() -> None:
    row = {
        "seq_median_us": 800.0,
        "seq_calls_s": 1000.0,
        "c16_calls_s": 1300.0,
        "c64_calls_s": 1000.0,
        "server_cpu_us_per_call": 450.0,
    }
    ref = {key: value * 2 for key, value in row.items()}
    data = {
        "results": {
            "stdio/toolwire": row,
            "stdio/mcpserver": ref,
            "http/toolwire": row,
            "http/mcpserver": ref,
            "stdio/raw-pipe": {**row, "seq_median_us": 50.0},
        }
    }
    figs = figures_of("server_bench", data)
    assert len(figs) == 11
    assert all(f["value"] / f["reference_value"] == 0.5 for f in figs[:10])
    assert figs[-1]["reference"].startswith("raw NDJSON pipe") and figs[-1]["value"] / figs[-1]["reference_value"] == 16


def test_regenerating_keeps_notes_written_around_the_block(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    out.write_text("# Benchmark results\n\nA profile says the SDK dispatch is most of the time.\n")
    write(render(machine(), datetime.now(UTC), [section([])], 1.0), out)
    first = out.read_text()
    assert first.startswith(BEGIN) and "A profile says the SDK dispatch" in first
    write(render(machine(), datetime.now(UTC), [section([figure("n", 2.0, "x", "r", 1.0)])], 1.0), out)
    second = out.read_text()
    assert second.count(BEGIN) == 1 and second.count(END) == 1
    assert "| n | 2 x | r | 1 x | 2.00 |" in second and "A profile says the SDK dispatch" in second


def test_a_modules_notes_are_listed_under_its_figures() -> None:
    """e.g. a peer framework that could not be measured, and why, next to the peers it did measure."""
    figs = [figure("step", 100.0, "µs", "peer step", 400.0)]
    data = {"notes": ["Pydantic AI not measured: pip install failed: no network"]}
    text = render(machine(), datetime.now(UTC), [{**section(figs), "data": data}], 1.0)
    table_row, note = text.index("| step | 100 µs"), text.index("- Pydantic AI not measured: pip install failed")
    assert table_row < note < text.index("raw figures")
