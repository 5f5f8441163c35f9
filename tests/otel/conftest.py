"""In-process telemetry for the otel tests: one global TracerProvider writing to memory, one MeterProvider read
on demand. The OpenTelemetry API allows one global provider per process, so it is installed once and cleared
between tests."""

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toolwire_otel import metrics as tw_metrics


@dataclass
class Telemetry:
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader


_telemetry: Telemetry | None = None


def _install() -> Telemetry:
    global _telemetry
    if _telemetry is None:
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        reader = InMemoryMetricReader(preferred_temporality={Histogram: AggregationTemporality.DELTA})
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        tw_metrics.enable()
        _telemetry = Telemetry(exporter, reader)
    return _telemetry


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    installed = _install()
    installed.spans.clear()
    installed.metrics.get_metrics_data()  # drain what earlier tests recorded (histograms use delta temporality)
    yield installed
    installed.spans.clear()
