"""configure_tracing in a real process: which exporter the options and OTEL_* variables pick, flushing at any end,
and nothing at all when nobody asked."""

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.otlp_sink import OtlpSink
from toolwire_otel.setup import child_process_env, configure_tracing, resolve_exporter

DRIVER = Path(__file__).with_name("trace_driver.py")
EXPECTED_NAMES = {"invoke_agent driver", "chat m-1", "execute_tool get_order"}


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(extra)
    return env


def run_driver(option: str, ending: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(DRIVER), option, ending], env=env, capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def sink() -> Iterator[OtlpSink]:
    with OtlpSink() as running:
        yield running


def test_resolve_exporter_from_option_and_env() -> None:
    assert resolve_exporter(None, {}) == "none"
    assert resolve_exporter("otlp", {}) == "otlp"
    assert resolve_exporter("Console", {}) == "console"
    assert resolve_exporter("runs/trace.jsonl", {}) == "file:runs/trace.jsonl"
    assert resolve_exporter(None, {"OTEL_TRACES_EXPORTER": "console,otlp"}) == "console"
    assert resolve_exporter(None, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}) == "otlp"
    assert resolve_exporter(None, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://x/v1/traces"}) == "otlp"
    assert resolve_exporter(None, {"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}) == "none"
    assert resolve_exporter(None, {"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}) == "none"
    assert resolve_exporter("none", {"OTEL_TRACES_EXPORTER": "otlp"}) == "none"


def test_unknown_exporter_name_says_what_to_use() -> None:
    with pytest.raises(ValueError, match=r"OTEL_TRACES_EXPORTER='zipkin' is not supported.*--trace otlp"):
        resolve_exporter(None, {"OTEL_TRACES_EXPORTER": "zipkin"})


def test_unwritable_trace_file_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [k for k in os.environ if k.startswith("OTEL_")]:
        monkeypatch.delenv(key)
    with pytest.raises(ValueError, match=r"cannot write the trace file .*--trace \./run-trace\.jsonl"):
        configure_tracing(str(tmp_path / "no-such-dir" / "t.jsonl"))


def test_nothing_asked_installs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [k for k in os.environ if k.startswith("OTEL_")]:
        monkeypatch.delenv(key)
    handle = configure_tracing()
    assert handle.exporter == "none"
    assert not handle.enabled and handle.meter_provider is None
    handle.flush()
    handle.shutdown()


def test_nothing_asked_exports_nothing_even_with_a_receiver_up(sink: OtlpSink) -> None:
    # The sink listens, but nobody pointed the process at it: the run must not be exported anywhere.
    done = run_driver("-", "shutdown", clean_env())
    assert done.returncode == 0, done.stderr
    assert "exporter=none enabled=False" in done.stdout
    assert sink.requests == 0


@pytest.mark.parametrize("ending", ["shutdown", "exit", "raise"])
def test_otlp_from_env_flushes_at_every_ending(sink: OtlpSink, ending: str) -> None:
    env = clean_env(
        OTEL_EXPORTER_OTLP_ENDPOINT=sink.endpoint, OTEL_SERVICE_NAME="setup-test", OTEL_BSP_SCHEDULE_DELAY="60000"
    )
    done = run_driver("-", ending, env)
    assert done.returncode == {"shutdown": 0, "exit": 3, "raise": 1}[ending], done.stderr
    # The batch delay is a minute, so spans can only have arrived through the flush at exit.
    spans = sink.wait_for(lambda s: {x["name"] for x in s} >= EXPECTED_NAMES, 20)
    by_name = {s["name"]: s for s in spans}
    agent = by_name["invoke_agent driver"]
    assert agent["resource"]["service.name"] == "setup-test"
    assert agent["resource"]["openinference.project.name"] == "toolwire"
    assert by_name["chat m-1"]["parent_span_id"] == agent["span_id"]
    assert by_name["chat m-1"]["kind"] == "CLIENT"
    assert by_name["chat m-1"]["attributes"]["gen_ai.usage.input_tokens"] == 10
    if ending == "raise":
        assert agent["status"]["code"] == "ERROR"
        assert agent["attributes"]["error.type"] == "RuntimeError"


def test_trace_option_wins_over_env(sink: OtlpSink, tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    done = run_driver(str(path), "shutdown", clean_env(OTEL_EXPORTER_OTLP_ENDPOINT=sink.endpoint))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert {s["name"] for s in lines} == EXPECTED_NAMES
    assert len({s["trace_id"] for s in lines}) == 1
    agent = next(s for s in lines if s["name"] == "invoke_agent driver")
    tool = next(s for s in lines if s["name"] == "execute_tool get_order")
    assert tool["parent_span_id"] == agent["span_id"]
    assert agent["resource"]["service.name"] == "toolwire"
    assert sink.requests == 0


def test_console_writes_to_stderr_only() -> None:
    done = run_driver("console", "shutdown", clean_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "exporter=console enabled=True"
    for name in EXPECTED_NAMES:
        assert f'"name": "{name}"' in done.stderr


def test_content_capture_is_off_by_default_and_on_when_opted_in(tmp_path: Path) -> None:
    default_file, opted_file = tmp_path / "default.jsonl", tmp_path / "opted.jsonl"
    assert run_driver(str(default_file), "shutdown", clean_env()).returncode == 0
    opted_env = clean_env(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="SPAN_ONLY")
    assert run_driver(str(opted_file), "shutdown", opted_env).returncode == 0
    default = {s["name"]: s["attributes"] for s in map(json.loads, default_file.read_text().splitlines())}
    opted = {s["name"]: s["attributes"] for s in map(json.loads, opted_file.read_text().splitlines())}
    assert not any(
        key.startswith(("gen_ai.input", "gen_ai.output", "gen_ai.tool.call.a", "gen_ai.tool.call.r"))
        for attrs in default.values()
        for key in attrs
    )
    assert json.loads(opted["chat m-1"]["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "look up A123"}]}
    ]
    assert json.loads(opted["execute_tool get_order"]["gen_ai.tool.call.arguments"]) == {"order_id": "A123"}
    assert json.loads(opted["execute_tool get_order"]["gen_ai.tool.call.result"]) == '{"item": "keyboard"}'


def test_child_process_env_passes_only_otel_variables() -> None:
    env = {"OTEL_SERVICE_NAME": "a", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OPENAI_API_KEY": "sk-x"}
    assert child_process_env(env) == {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}


def test_metrics_exported_only_when_asked(sink: OtlpSink) -> None:
    base = clean_env(OTEL_EXPORTER_OTLP_ENDPOINT=sink.endpoint)
    assert run_driver("-", "shutdown", base).returncode == 0
    sink.wait_for(lambda s: any(x["name"] == "invoke_agent driver" for x in s), 20)
    assert sink.metric_names == set()  # traces asked for, metrics not
    done = run_driver("-", "shutdown", {**base, "OTEL_METRICS_EXPORTER": "otlp"})
    assert done.returncode == 0, done.stderr
    assert {
        "gen_ai.client.operation.duration",
        "gen_ai.client.token.usage",
        "toolwire.tool.call.duration",
    } <= sink.metric_names


def test_tracing_off_is_the_api_no_op_with_no_provider() -> None:
    code = (
        "from opentelemetry import trace\n"
        "from toolwire_otel import spans\n"
        "from toolwire_otel.setup import configure_tracing\n"
        "h = configure_tracing()\n"
        "assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)\n"
        "from types import SimpleNamespace\n"
        "m = SimpleNamespace(provider='p', model='m', server_address=None, server_port=None)\n"
        "with spans.agent_span('a', 'run_1') as a, spans.chat_span(m, 'run_1') as c:\n"
        "    assert not a.is_recording() and not c.is_recording()\n"
        "    assert spans.trace_id_hex(a) is None and spans.span_ref(c) is None\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=clean_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
