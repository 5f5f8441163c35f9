"""The scale promise of issue 13 in CI size: 2,000 concurrent scripted runs in this process, through one shared
connection to one Streamable HTTP tool server, all complete with every tool call answered, in at most 50 KiB of
client memory each (bench/scale_bench.py at 10,000 is the full measurement). Memory only: throughput and latency
are the bench's figures, never a test's."""

import anyio
from bench import scale_bench

RUNS = 2_000


def test_two_thousand_runs_on_one_connection_fit_in_50_kib_each() -> None:
    with scale_bench.echo_server() as (url, proc):
        figures = anyio.run(lambda: scale_bench.measure(RUNS, url, proc))
    assert figures["completed"] == RUNS, figures["failures"]
    assert figures["failed_calls"] == {}
    assert figures["peaks_reset"]  # the peak is this load's, not an earlier test's
    assert figures["client_kib_per_run"] <= scale_bench.TARGET_KIB_PER_RUN, figures
