"""A small OTLP/HTTP receiver for tests: POST /v1/traces (protobuf, gzip ok), GET /spans, DELETE /spans.

Start it with `with OtlpSink() as sink:` (127.0.0.1, ephemeral port); point exporters at `sink.endpoint` via
OTEL_EXPORTER_OTLP_ENDPOINT; read spans in-process with `sink.spans()` or wait on a real condition with
`sink.wait_for(predicate, timeout_s)`. Spans come back flattened: hex ids, kind/status names, plain attributes,
and the resource attributes of the process that sent them (same shape as toolwire_otel.jsonl).
"""

import gzip
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from .loopback import LoopbackServer
from .polling import wait_until

Spans = list[dict[str, Any]]
_KINDS = {0: "UNSPECIFIED", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}
_STATUS = {Status.STATUS_CODE_UNSET: "UNSET", Status.STATUS_CODE_OK: "OK", Status.STATUS_CODE_ERROR: "ERROR"}


def any_value(value: AnyValue) -> Any:
    field = value.WhichOneof("value")
    if field is None:
        return None
    if field == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if field == "kvlist_value":
        return attributes(value.kvlist_value.values)
    if field == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, field)


def attributes(pairs: Any) -> dict[str, Any]:
    return {kv.key: any_value(kv.value) for kv in pairs if isinstance(kv, KeyValue)}


def flatten(request: ExportTraceServiceRequest) -> Spans:
    out: Spans = []
    for resource_spans in request.resource_spans:
        resource = attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                out.append(_span(span, resource, scope_spans.scope.name))
    return out


def _span(span: Span, resource: dict[str, Any], scope: str) -> dict[str, Any]:
    return {
        "name": span.name,
        "trace_id": span.trace_id.hex(),
        "span_id": span.span_id.hex(),
        "parent_span_id": span.parent_span_id.hex() or None,
        "kind": _KINDS.get(span.kind, str(span.kind)),
        "start_time_unix_nano": span.start_time_unix_nano,
        "end_time_unix_nano": span.end_time_unix_nano,
        "status": {"code": _STATUS.get(span.status.code, "UNSET"), "message": span.status.message},
        "attributes": attributes(span.attributes),
        "events": [
            {"name": e.name, "time_unix_nano": e.time_unix_nano, "attributes": attributes(e.attributes)}
            for e in span.events
        ],
        "links": [{"trace_id": link.trace_id.hex(), "span_id": link.span_id.hex()} for link in span.links],
        "resource": resource,
        "scope": scope,
    }


class OtlpSink(LoopbackServer):
    """The receiver; thread-safe. `requests` counts the export POSTs it accepted, `metric_points` the data points."""

    def __init__(self, port: int = 0, *, decode: bool = True) -> None:
        self.decode = decode
        """False: accept and count bytes only (a benchmark's receiver should not eat the CPU it measures)."""
        self.bytes_received = 0
        self._spans: Spans = []
        self._changed = threading.Condition()
        self.requests = 0
        self.metric_names: set[str] = set()
        super().__init__(self._handler_class(), port, name="otlp-sink")
        self.endpoint = self.base_url
        """The base URL for OTEL_EXPORTER_OTLP_ENDPOINT (exporters append /v1/traces themselves)."""
        self.traces_url = f"{self.endpoint}/v1/traces"

    def spans(self) -> Spans:
        with self._changed:
            return list(self._spans)

    def clear(self) -> None:
        with self._changed:
            self._spans.clear()

    def wait_for(self, predicate: Callable[[Spans], bool], timeout_s: float = 20.0) -> Spans:
        """Block until predicate(spans) holds (woken by each export), or raise WaitFailed showing what came."""

        def holding() -> str:
            return f"the sink holds {len(self._spans)} spans: {sorted({s['name'] for s in self._spans})}"

        with self._changed:  # the condition's wait releases the lock until an export (or the deadline) wakes it
            wait_until(
                lambda: predicate(list(self._spans)),
                "the exported spans to meet the test's condition",
                timeout_s=timeout_s,
                interval_s=timeout_s,
                pause=self._changed.wait,
                detail=holding,
            )
            return list(self._spans)

    def _add(self, spans: Spans) -> None:
        with self._changed:
            self._spans.extend(spans)
            self.requests += 1
            self._changed.notify_all()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def _reply(self, status: int, body: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding", "") == "gzip":
                    body = gzip.decompress(body)
                sink.bytes_received += len(body)
                if not sink.decode and self.path in ("/v1/traces", "/v1/metrics"):
                    sink.requests += 1
                elif self.path == "/v1/traces":
                    request = ExportTraceServiceRequest()
                    request.ParseFromString(body)
                    sink._add(flatten(request))
                elif self.path == "/v1/metrics":
                    metrics_request = ExportMetricsServiceRequest()
                    metrics_request.ParseFromString(body)
                    names = {
                        m.name for rm in metrics_request.resource_metrics for sm in rm.scope_metrics for m in sm.metrics
                    }
                    with sink._changed:
                        sink.metric_names |= names
                        sink._changed.notify_all()
                else:
                    self._reply(404, b"unknown path; POST /v1/traces or /v1/metrics", "text/plain")
                    return
                self._reply(200, b"", "application/x-protobuf")

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/spans":
                    self._reply(200, json.dumps(sink.spans()).encode(), "application/json")
                else:
                    self._reply(404, b"GET /spans", "text/plain")

            def do_DELETE(self) -> None:
                sink.clear()
                self._reply(204, b"", "text/plain")

        return Handler


def serve(port: int = 0) -> OtlpSink:
    """Start a sink on 127.0.0.1 (ephemeral port by default); call .stop() when done."""
    return OtlpSink(port).start()
