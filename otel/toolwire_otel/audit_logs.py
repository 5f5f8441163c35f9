"""The audit trail's records as OpenTelemetry log records too, for a host's log pipeline: each emitted in the
context of the call it records, so it carries the trace id and span id of the server's `tools/call` span and a
backend joins it to the trace. Off (returns at once) until setup.py installs a LoggerProvider (OTEL_LOGS_EXPORTER);
the audit database stays the record `toolwire audit` reads."""

import time
from collections.abc import Mapping

from opentelemetry._logs import SeverityNumber, get_logger, get_logger_provider
from opentelemetry.sdk._logs import LoggerProvider

from toolwire_otel.switch import Switch

AUDIT_EVENT = "toolwire.audit"
"""The log record's event name; its attributes are the audit record's fields as `toolwire.audit.<field>`."""

_logger = get_logger("toolwire.audit")
_switch = Switch()
enable = _switch.enable
enabled = _switch.enabled


def flush(timeout_ms: int = 5000) -> None:
    """Export what is queued: the server calls it on its way out, where the process's exit hooks may not run."""
    provider = get_logger_provider()
    if _switch.on and isinstance(provider, LoggerProvider):
        provider.force_flush(timeout_ms)


def emit_audit_record(tool: str, outcome: str, at: float, fields: Mapping[str, str | int | float]) -> None:
    """One audit record (made at `at`, epoch seconds) as a log record, in the current (the call's) context."""
    if not _switch.on:
        return
    _logger.emit(
        timestamp=int(at * 1e9),
        observed_timestamp=time.time_ns(),
        event_name=AUDIT_EVENT,
        severity_number=SeverityNumber.INFO,
        body=f"tools/call {tool}: {outcome}",
        attributes={f"toolwire.audit.{key}": value for key, value in fields.items()},
    )
