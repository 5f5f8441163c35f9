"""The audit trail's records as OpenTelemetry log records: one per call that reached the server, each joined to the
trace and span of the call it records, carrying the same fields as the database's record (arguments redacted)."""

import json
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry._logs import set_logger_provider
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

from helpers.cli import clean_env
from helpers.servers import REPO, HttpServer, http_client
from helpers.telemetry import Telemetry
from toolwire_otel import audit_logs
from toolwire_otel.setup import _log_exporter
from toolwire_server.auth.access import Grant
from toolwire_server.policy.audit import read_records
from toolwire_server.tools.pipeline import call
from toolwire_server.tools.request import CallRequest
from toolwire_server.transports.processes import ServeSpec

CONFIG = f"""
tools = "{REPO}/tests/server/policy_tools.py:registry"

[[limits]]
agent = "support-bot"
tool = "echo"
per_day = 1

[audit]
sqlite = "audit.db"
arguments = true
secret_fields = ["text"]
"""

_exporter = InMemoryLogRecordExporter()
_provider = LoggerProvider()
_provider.add_log_record_processor(SimpleLogRecordProcessor(_exporter))
set_logger_provider(_provider)


async def test_each_audit_record_is_a_log_record_in_its_calls_trace(telemetry: Telemetry, tmp_path: Path) -> None:
    (tmp_path / "server.toml").write_text(CONFIG)
    registry, _ = ServeSpec("", config_file=str(tmp_path / "server.toml")).load()
    bot = Grant("support-bot", ("echo",))
    audit_logs.enable()
    _exporter.clear()
    try:
        with trace.get_tracer("test").start_as_current_span("tools/call echo") as first:
            await call(CallRequest(registry, bot, "echo", {"text": "card 4111"}, max_result_chars=1000))
        with trace.get_tracer("test").start_as_current_span("tools/call echo") as second:
            await call(CallRequest(registry, bot, "echo", {"text": "again"}, max_result_chars=1000))  # over its quota
        await call(
            CallRequest(registry, bot, "get_order", {"order_id": "1"}, max_result_chars=1000)
        )  # no trace; refused
    finally:
        audit_logs.enable(False)
    logs = [got.log_record for got in _exporter.get_finished_logs()]
    assert [(r.event_name, r.body) for r in logs] == [
        ("toolwire.audit", "tools/call echo: ok"),
        ("toolwire.audit", "tools/call echo: limited"),
        ("toolwire.audit", "tools/call get_order: refused"),
    ]
    for record, span in zip(logs, (first, second), strict=False):
        context = span.get_span_context()
        assert (record.trace_id, record.span_id) == (context.trace_id, context.span_id)
    assert not logs[2].trace_id  # outside any span: no trace to join
    attributes = dict(logs[0].attributes or {})
    assert attributes["toolwire.audit.agent"] == "support-bot" and attributes["toolwire.audit.outcome"] == "ok"
    assert attributes["toolwire.audit.arguments"] == '{"text":"[redacted]"}'  # the secret field, as in the database

    assert registry.policy is not None and registry.policy.audit is not None
    registry.policy.audit.close()
    records = read_records(str(tmp_path / "audit.db"))
    assert len(records) == len(logs)
    assert {r["arguments_sha256"] for r in records} == {
        str((r.attributes or {})["toolwire.audit.arguments_sha256"]) for r in logs
    }


def test_an_unknown_logs_exporter_says_what_to_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_LOGS_EXPORTER", "splunk;rm -rf /")
    with pytest.raises(ValueError, match=r"OTEL_LOGS_EXPORTER='splunk;rm -rf /' is not supported: set it to otlp"):
        _log_exporter()
    monkeypatch.setenv("OTEL_LOGS_EXPORTER", "none")
    assert _log_exporter() is None  # the default: the audit database only


def _served(spans_file: Path) -> int:
    lines = spans_file.read_text().splitlines() if spans_file.exists() else []
    return sum(json.loads(line)["name"] == "tools/call echo" for line in lines)


def _console_logs(stderr: str) -> list[dict[str, object]]:
    """The log records ConsoleLogRecordExporter wrote (JSON objects) among the server's other stderr lines."""
    decoder, found, at = json.JSONDecoder(), [], stderr.find('{\n    "body"')
    while at != -1:
        record, end = decoder.raw_decode(stderr, at)
        found.append(record)
        at = stderr.find('{\n    "body"', end)
    return found


async def test_a_real_server_exports_them_in_the_calls_trace_and_on_sigterm(tmp_path: Path) -> None:
    (tmp_path / "server.toml").write_text(CONFIG.replace("per_day = 1", "per_day = 5"))
    spans_file = tmp_path / "spans.jsonl"
    env = clean_env(
        OTEL_LOGS_EXPORTER="console",
        OTEL_BLRP_SCHEDULE_DELAY="600000",  # log records: only the flush at the server's stop exports them
        TOOLWIRE_TRACE_FILE=str(spans_file),
        OTEL_BSP_SCHEDULE_DELAY="600000",  # spans too: sent at the stop (uvicorn skips atexit: the lifespan does it)
    )
    server = HttpServer(f"--config={tmp_path / 'server.toml'}", env=env)
    with server:
        async with http_client(server.url) as client:
            for text in ("a", "b", "c"):
                assert not (await client.call_tool("echo", {"text": text})).is_error
        assert _served(spans_file) == 0  # queued: their batch is due in 10 minutes
    # Exported as the server stopped (SIGTERM), 10 minutes before their batch was due: spans and log records.
    assert _served(spans_file) == 3
    logs = [r for r in _console_logs(server.stderr()) if r["event_name"] == "toolwire.audit"]
    assert [r["body"] for r in logs] == ["tools/call echo: ok"] * 3
    spans = [json.loads(line) for line in spans_file.read_text().splitlines()]
    served = {(s["trace_id"], s["span_id"]) for s in spans if s["name"] == "tools/call echo"}
    assert {(str(r["trace_id"])[2:], str(r["span_id"])[2:]) for r in logs} == served and len(served) == 3
