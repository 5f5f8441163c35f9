"""The server's policy in OpenTelemetry: per-agent call metrics (calls, refusals, errors, latency) and the audit
record carrying the trace id of the call it records."""

from pathlib import Path
from typing import Any

from opentelemetry import trace

from helpers.servers import REPO
from helpers.telemetry import Telemetry
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
per_day = 2

[audit]
sqlite = "audit.db"
"""


def _points(telemetry: Telemetry) -> dict[tuple[str, str], int]:
    """(agent, outcome) -> calls, from toolwire.server.call.duration."""
    found: dict[tuple[str, str], int] = {}
    data = telemetry.metrics.get_metrics_data()
    assert data is not None
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == "toolwire.server.call.duration":
                    for point in metric.data.data_points:
                        attrs: Any = point.attributes
                        key = (attrs["toolwire.agent"], attrs["toolwire.tool.outcome"])
                        found[key] = found.get(key, 0) + point.count  # type: ignore[attr-defined]
    return found


async def test_per_agent_metrics_and_the_audit_joins_the_trace(telemetry: Telemetry, tmp_path: Path) -> None:
    (tmp_path / "server.toml").write_text(CONFIG)
    registry, _ = ServeSpec("", config_file=str(tmp_path / "server.toml")).load()
    bot, other = Grant("support-bot", ("*",)), Grant("other", ("echo",))
    with trace.get_tracer("test").start_as_current_span("the caller's call") as span:
        for grant in (bot, bot, bot, other):
            await call(CallRequest(registry, grant, "echo", {"text": "x"}, max_result_chars=1000))
        await call(CallRequest(registry, other, "get_order", {"order_id": "1"}, max_result_chars=1000))
    assert _points(telemetry) == {
        ("support-bot", "ok"): 2,
        ("support-bot", "limited"): 1,
        ("other", "ok"): 1,
        ("other", "refused"): 1,
    }
    assert registry.policy is not None and registry.policy.audit is not None
    registry.policy.audit.close()
    records = read_records(str(tmp_path / "audit.db"))
    assert {r["trace_id"] for r in records} == {format(span.get_span_context().trace_id, "032x")}
