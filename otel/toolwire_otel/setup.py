"""Turn tracing on for one process, from `--trace` or the standard OTEL_* variables, and flush it at the end.

Nothing is installed unless the user asks (a `--trace` value, `OTEL_TRACES_EXPORTER`, or an OTLP endpoint
variable): the OpenTelemetry API then stays its no-op self and every span helper costs next to nothing.
"""

import atexit
import logging
import os
import re
import socket
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

from opentelemetry import metrics, trace
from opentelemetry._logs import set_logger_provider
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, ConsoleLogRecordExporter, LogRecordExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, MetricExporter, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

from toolwire_otel import audit_logs
from toolwire_otel import metrics as tw_metrics
from toolwire_otel.jsonl import JsonLinesSpanExporter

TRACES_EXPORTER_ENV = "OTEL_TRACES_EXPORTER"
TRACE_FILE_ENV = "TOOLWIRE_TRACE_FILE"
"""Set by `--trace FILE` for the tool servers the run spawns, so their spans land in the same file."""
METRICS_EXPORTER_ENV = "OTEL_METRICS_EXPORTER"
LOGS_EXPORTER_ENV = "OTEL_LOGS_EXPORTER"
ENDPOINT_ENVS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
PROJECT_ATTRIBUTE = "openinference.project.name"
"""Phoenix files spans under this resource attribute; agent and server share one so a trace stays whole."""
DEFAULT_PROJECT = "toolwire"
NAMED_EXPORTERS = ("otlp", "console", "none")
Exporter = TypeVar("Exporter")
USAGE = "use --trace otlp, --trace console, --trace none or --trace FILE (a JSON-lines file path)"


@dataclass
class TracingHandle:
    """What configure_tracing installed; flush() and shutdown() are safe to call any number of times."""

    exporter: str
    """'none', 'otlp', 'console' or 'file:<path>'."""
    tracer_provider: TracerProvider | None = None
    meter_provider: MeterProvider | None = None
    logger_provider: LoggerProvider | None = None
    _closed: bool = field(default=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def enabled(self) -> bool:
        return self.tracer_provider is not None

    def flush(self, timeout_ms: int = 10_000) -> bool:
        ok = True
        if self.tracer_provider is not None:
            ok = self.tracer_provider.force_flush(timeout_ms)
        if self.meter_provider is not None:
            ok = self.meter_provider.force_flush(timeout_ms) and ok
        if self.logger_provider is not None:
            ok = self.logger_provider.force_flush(timeout_ms) and ok
        return ok

    def shutdown(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self.tracer_provider is not None:
            self.tracer_provider.shutdown()  # flushes the batch first
        if self.meter_provider is not None:
            self.meter_provider.shutdown()
        if self.logger_provider is not None:
            self.logger_provider.shutdown()

    def __enter__(self) -> "TracingHandle":
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


def resolve_exporter(trace_option: str | None, env: Mapping[str, str] | None = None) -> str:
    """The exporter the user asked for: the CLI value wins, then OTEL_TRACES_EXPORTER, then an endpoint variable."""
    env = os.environ if env is None else env
    if trace_option is not None and trace_option.strip():
        value = trace_option.strip()
        return value.lower() if value.lower() in NAMED_EXPORTERS else f"file:{value}"
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return "none"
    raw = env.get(TRACES_EXPORTER_ENV, "").strip().lower()
    if raw:
        first = raw.split(",")[0].strip()
        if first not in NAMED_EXPORTERS:
            raise ValueError(f"{TRACES_EXPORTER_ENV}={raw!r} is not supported: set otlp, console or none; {USAGE}")
        return first
    if any(env.get(name, "").strip() for name in ENDPOINT_ENVS):
        return "otlp"
    return "none"


def build_resource(service_name: str | None, default_service: str) -> Resource:
    """service.name from the argument, else OTEL_SERVICE_NAME, else the default; Phoenix project unless set."""
    from_env = Resource.create()  # reads OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME
    extra: dict[str, str] = {}
    if service_name:
        extra[SERVICE_NAME] = service_name
    elif not os.environ.get("OTEL_SERVICE_NAME", "").strip():
        extra[SERVICE_NAME] = default_service
    if PROJECT_ATTRIBUTE not in from_env.attributes:
        extra[PROJECT_ATTRIBUTE] = DEFAULT_PROJECT
    return from_env.merge(Resource(extra))


def _span_exporter(name: str) -> SpanExporter | None:
    if name == "console":
        return ConsoleSpanExporter(out=sys.stderr)  # stdout may be a stdio MCP pipe or the CLI's own output
    if name.startswith("file:"):
        return JsonLinesSpanExporter(name.removeprefix("file:"))
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    endpoint = otlp_traces_endpoint()
    trouble = _unreachable(endpoint)
    if trouble is not None:  # one line now, instead of export retries slowing the end of the run
        logging.getLogger("toolwire.otel").warning(
            "spans not exported: nothing answers at %s (%s); start a receiver (e.g. Phoenix) or set "
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            endpoint,
            trouble,
        )
        return None
    return OTLPSpanExporter()  # endpoint, headers and timeout from the OTEL_EXPORTER_OTLP_* variables


PROBE_TIMEOUT_S = 1.0


def otlp_traces_endpoint(env: Mapping[str, str] | None = None) -> str:
    """Where the OTLP/HTTP exporter sends spans, read from the same variables it reads."""
    env = os.environ if env is None else env
    full = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if full:
        return full
    base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip() or "http://localhost:4318"
    return base.rstrip("/") + "/v1/traces"


def _unreachable(endpoint: str) -> str | None:
    """Why nothing can take spans at `endpoint` (a TCP connect is tried), or None when something listens."""
    url = urlsplit(endpoint)
    try:
        port = url.port or (443 if url.scheme == "https" else 80)
        with socket.create_connection((url.hostname or "localhost", port), timeout=PROBE_TIMEOUT_S):
            return None
    except (OSError, ValueError) as exc:
        return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def _asked_exporter(env: str, console: Callable[[], Exporter], otlp: Callable[[], Exporter]) -> Exporter | None:
    """The exporter `env` names (console, otlp), or None when it is unset or `none`; any other value is refused."""
    raw = os.environ.get(env, "none").split(",")[0].strip().lower()
    if raw == "console":
        return console()
    if raw == "otlp":
        return otlp()
    if raw in ("", "none"):
        return None
    raise ValueError(f"{env}={raw!r} is not supported: set it to otlp, console or none")


def _otlp_metric_exporter() -> MetricExporter:
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    return OTLPMetricExporter()


def _otlp_log_exporter() -> LogRecordExporter:
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter

    return OTLPLogExporter()


def _metric_exporter() -> MetricExporter | None:
    """Metrics only when asked for by OTEL_METRICS_EXPORTER (Phoenix, for one, has no metrics endpoint)."""
    return _asked_exporter(METRICS_EXPORTER_ENV, lambda: ConsoleMetricExporter(out=sys.stderr), _otlp_metric_exporter)


def _log_exporter() -> LogRecordExporter | None:
    """Log records (the audit trail's) only when asked for by OTEL_LOGS_EXPORTER, as metrics are."""
    return _asked_exporter(LOGS_EXPORTER_ENV, lambda: ConsoleLogRecordExporter(out=sys.stderr), _otlp_log_exporter)


def configure_tracing(trace: str | None = None, service_name: str | None = None) -> TracingHandle:
    """Install a TracerProvider (and a MeterProvider if metrics are asked for) for this process.

    `trace` is the CLI's `--trace` value: 'otlp', 'console', 'none' or a file path. With neither it nor the
    OTEL_* variables set, nothing is installed and the returned handle does nothing.
    """
    return _configure(trace, service_name, default_service="toolwire")


def configure_server_tracing(service_name: str | None = None) -> TracingHandle:
    """The tool-server process: same variables; the SDK's OpenTelemetryMiddleware then emits `tools/call {tool}`
    SERVER spans parented through `params._meta.traceparent`."""
    trace_file = os.environ.get(TRACE_FILE_ENV) or None
    try:
        return _configure(trace_file, service_name, default_service="toolwire-server")
    except ValueError as exc:  # a tool server keeps serving without its spans rather than not starting
        logging.getLogger("toolwire.otel").warning("tracing off in this tool server: %s", exc)
        return TracingHandle(exporter="none")


_installed: TracingHandle | None = None
"""The global providers can be set once per process; a second call returns the first handle."""


def flush_installed() -> None:
    """Send what is still queued, for a process about to end without running atexit (uvicorn raises SIGTERM again
    once its lifespan is over); a no-op when nothing was installed. A flush, not a shutdown: an app served inside a
    test's process leaves that process's telemetry working."""
    if _installed is not None:
        _installed.flush()


def _configure(trace_option: str | None, service_name: str | None, *, default_service: str) -> TracingHandle:
    global _installed
    if _installed is not None:
        return _installed
    exporter_name = resolve_exporter(trace_option)
    metric_exporter = _metric_exporter()
    log_exporter = _log_exporter()
    handle = TracingHandle(exporter=exporter_name)
    if exporter_name == "none" and metric_exporter is None and log_exporter is None:
        return handle
    resource = build_resource(service_name, default_service)
    span_exporter = _span_exporter(exporter_name) if exporter_name != "none" else None
    if span_exporter is not None:
        provider = TracerProvider(resource=resource)
        provider.add_span_processor(BatchSpanProcessor(span_exporter))
        trace.set_tracer_provider(provider)
        handle.tracer_provider = provider
    if metric_exporter is not None:
        reader = PeriodicExportingMetricReader(metric_exporter)
        meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
        metrics.set_meter_provider(meter_provider)
        tw_metrics.enable()
        handle.meter_provider = meter_provider
    if log_exporter is not None:
        logger_provider = LoggerProvider(resource=resource)
        logger_provider.add_log_record_processor(BatchLogRecordProcessor(log_exporter))
        set_logger_provider(logger_provider)
        audit_logs.enable()
        handle.logger_provider = logger_provider
    _installed = handle
    atexit.register(handle.shutdown)  # also covers sys.exit and uncaught errors; shutdown is idempotent
    return handle


OTLP_CREDENTIALS = re.compile(r"^OTEL_EXPORTER_OTLP_(?:[A-Z]+_)?(?:HEADERS|CLIENT_KEY)$")
"""Variables holding an OTLP backend's credentials (Langfuse's Basic auth, an API key header), never passed on."""


def child_process_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The OTEL_* variables a spawned tool server needs to export to the same place (the MCP stdio client passes
    the child only a handful of variables, so a stdio source must add these to its `env`), and the trace file of
    `--trace FILE`. OTEL_SERVICE_NAME is
    left out: the server names itself toolwire-server rather than taking the agent's name; so are the OTLP headers
    and client key, which carry the tracing backend's credentials (a server spec names them to pass them)."""
    passed = {
        key: value
        for key, value in (os.environ if env is None else env).items()
        if (key.startswith("OTEL_") and key != "OTEL_SERVICE_NAME" and not OTLP_CREDENTIALS.match(key))
        or key == TRACE_FILE_ENV
    }
    if env is None and _installed is not None and _installed.exporter.startswith("file:"):
        passed[TRACE_FILE_ENV] = str(Path(_installed.exporter.removeprefix("file:")).resolve())
    return passed
