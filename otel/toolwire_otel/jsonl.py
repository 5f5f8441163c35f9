"""A span exporter that appends one JSON object per finished span to a file (`--trace FILE`).

The shape matches what the test OTLP sink returns (flat attributes, hex ids), so a file and a receiver read alike.
"""

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind


def span_to_dict(span: ReadableSpan) -> dict[str, Any]:
    """The flattened form of one span: ids as hex, kind and status as short names, attributes as plain values."""
    ctx = span.get_span_context()
    parent = span.parent
    return {
        "name": span.name,
        "trace_id": f"{ctx.trace_id:032x}" if ctx else None,
        "span_id": f"{ctx.span_id:016x}" if ctx else None,
        "parent_span_id": f"{parent.span_id:016x}" if parent else None,
        "kind": _kind_name(span.kind),
        "start_time_unix_nano": span.start_time,
        "end_time_unix_nano": span.end_time,
        "status": {"code": span.status.status_code.name, "message": span.status.description or ""},
        "attributes": _plain(dict(span.attributes or {})),
        "events": [
            {"name": e.name, "time_unix_nano": e.timestamp, "attributes": _plain(dict(e.attributes or {}))}
            for e in span.events
        ],
        "links": [
            {"trace_id": f"{link.context.trace_id:032x}", "span_id": f"{link.context.span_id:016x}"}
            for link in span.links
        ],
        "resource": _plain(dict(span.resource.attributes)),
        "scope": span.instrumentation_scope.name if span.instrumentation_scope else None,
    }


def _kind_name(kind: SpanKind) -> str:
    return kind.name  # INTERNAL, SERVER, CLIENT, PRODUCER, CONSUMER


def _plain(attrs: dict[str, Any]) -> dict[str, Any]:
    return {key: list(value) if isinstance(value, tuple) else value for key, value in attrs.items()}


class JsonLinesSpanExporter(SpanExporter):
    """Appends spans to `path` as JSON lines; the file is opened once, at set-up, so a bad path fails early.

    The agent and its stdio tool servers may share one file: it is opened O_APPEND and each batch goes out in
    one write(), so lines from the two processes never interleave mid-line.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise ValueError(
                f"cannot write the trace file '{self.path}': {exc.strerror or exc}. "
                "Pass --trace with a path in a directory you can write to, e.g. --trace ./run-trace.jsonl"
            ) from exc
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        data = "".join(json.dumps(span_to_dict(span), default=str) + "\n" for span in spans).encode()
        with self._lock:
            if self._fd is None:
                return SpanExportResult.FAILURE
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True  # nothing is buffered: every export is written through

    def shutdown(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
