"""In-process telemetry for tests: one global TracerProvider writing to memory, one MeterProvider read on demand.
The OpenTelemetry API allows one global provider per process, so `install()` sets them up once and hands back the
same pair on every later call (tests/otel/conftest.py clears them between tests)."""

from dataclasses import dataclass

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from toolwire_otel import metrics as tw_metrics


@dataclass
class Telemetry:
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader


_telemetry: Telemetry | None = None


def install() -> Telemetry:
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
