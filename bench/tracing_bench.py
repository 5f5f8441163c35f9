"""What tracing costs a run: a 10-step scripted run (9 tool steps + a final answer) with tracing on (OTLP/HTTP to a
local receiver, batch export) against tracing off (no provider: the API's no-op), in the same bench run.

The OpenTelemetry API allows one global provider per process, so each configuration runs in its own child
process; the parent alternates off/on children for several rounds so machine noise hits both alike.
`python -m bench.tracing_bench` prints the figures; `run()` returns them.
"""

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
STEPS = 10
TARGET_OVERHEAD_PCT = 10.0
MODES = ("off", "spans", "sdk", "on", "bare")
"""off: no provider. spans: an SDK provider with no processor (the cost of making spans and their attributes).
sdk: spans made and batched, exporter drops them (agent only). on: OTLP/HTTP export from the agent and, over stdio,
from the tool server too (the full two-process trace). bare: no run at all, only the bare OpenTelemetry SDK making
as many nested spans with as many attributes as an `sdk` run made, batched to the same dropping exporter: the floor
the agent's tracing is compared with."""


# ---- the child: one configuration, many runs ---------------------------------------------------------------------
def _child(mode: str, transport: str, runs: int, warmup: int) -> None:
    import anyio

    from toolwire_client import Agent, McpSource, RegistrySource, ScriptedModel, ToolBox
    from toolwire_otel.setup import child_process_env, configure_tracing
    from toolwire_shared.messages import AssistantMessage, Message, ToolCall, ToolResultMessage

    handle = configure_tracing("otlp" if mode == "on" else None)
    assert handle.enabled == (mode == "on")
    if mode in ("spans", "sdk", "bare"):  # separates making spans, batching them, and encoding + sending them
        from opentelemetry import trace as otel_trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

        class Drop(SpanExporter):
            """Counts what a run makes (spans, attributes), so `bare` can make as many with the bare SDK."""

            spans = attributes = 0

            def export(self, spans: Any) -> SpanExportResult:
                Drop.spans += len(spans)
                Drop.attributes += sum(len(span.attributes or {}) for span in spans)
                return SpanExportResult.SUCCESS

        provider = TracerProvider()
        if mode in ("sdk", "bare"):
            provider.add_span_processor(BatchSpanProcessor(Drop()))
        otel_trace.set_tracer_provider(provider)
    if mode == "bare":
        print(json.dumps(_bare_spans(runs, warmup)))
        return

    def script(messages: list[Message]) -> AssistantMessage:
        done = sum(isinstance(m, ToolResultMessage) for m in messages)
        if done >= STEPS - 1:
            return AssistantMessage(text=f"done after {done} calls")
        return AssistantMessage(
            tool_calls=[ToolCall(id=f"call_{done}", name="calculator", arguments={"expression": f"{done} * 2"})]
        )

    def calculator(expression: str) -> str:
        """Multiply."""
        left, _, right = expression.partition("*")
        return str(float(left) * float(right))

    def make_agent_model() -> Any:
        if transport != "provider":
            return ScriptedModel(script, name="bench-model")
        from toolwire_client import make_model

        return make_model("openai:gpt-4.1-mini", base_url=os.environ["BENCH_PROVIDER_URL"], api_key="sk-bench")

    async def main() -> list[float]:
        if transport == "stdio":
            argv = [sys.executable, "-m", "toolwire_server", "examples.support_tools:registry", "--stdio"]
            source: Any = McpSource("support", command=argv, env=child_process_env(), cwd=str(REPO))
        else:
            from toolwire_server import Registry

            registry = Registry("local")
            registry.add(calculator)
            source = RegistrySource(registry)
        toolbox = ToolBox([source])
        await toolbox.start()
        times: list[float] = []
        try:
            for i in range(warmup + runs):
                model = make_agent_model()
                agent = Agent.of(model, toolbox, name="bench")
                started = time.perf_counter()
                state = await agent.run("count")
                took = time.perf_counter() - started
                await model.aclose()
                assert state.status == "done" and len(state.steps) == STEPS, state.report
                if i >= warmup:
                    times.append(took)
        finally:
            await toolbox.aclose()
        return times

    times = anyio.run(main)
    handle.shutdown()
    if mode == "sdk":
        provider.force_flush()  # every span of every run through the counting exporter
        made = {"spans_per_run": Drop.spans / (warmup + runs), "attributes_per_span": Drop.attributes / Drop.spans}
        Path(os.environ["BENCH_SPAN_COUNTS"]).write_text(json.dumps(made))
    print(json.dumps(times))


def _bare_spans(runs: int, warmup: int) -> list[float]:
    """One 'run' of bare SDK spans: a root and its children, as many as an agent run made, each with as many
    attributes (the counts the last `sdk` child wrote)."""
    from opentelemetry import trace as otel_trace

    made = json.loads(Path(os.environ["BENCH_SPAN_COUNTS"]).read_text())
    children, attrs = max(0, round(made["spans_per_run"]) - 1), round(made["attributes_per_span"])
    tracer = otel_trace.get_tracer("bench.bare")
    keys = [f"bench.attr.{i}" for i in range(attrs)]
    times: list[float] = []
    for i in range(warmup + runs):
        started = time.perf_counter()
        with tracer.start_as_current_span("root") as root:
            for key in keys:
                root.set_attribute(key, "value")
            for _ in range(children):
                with tracer.start_as_current_span("child") as child:
                    for key in keys:
                        child.set_attribute(key, "value")
        if i >= warmup:
            times.append(time.perf_counter() - started)
    return times


_SPAN_COUNTS = Path(os.environ.get("TMPDIR", "/tmp")) / f"toolwire-bench-span-counts-{os.getpid()}.json"


# ---- the parent: alternate children, collect ---------------------------------------------------------------------
def _provider_reply(request: Any) -> Any:
    """The loopback OpenAI-compatible provider: a calculator call per step until STEPS - 1 results, then text."""
    from tests.helpers.fake_providers import openai_call, openai_completion

    done = sum(m.get("role") == "tool" for m in request.body["messages"])
    if done >= STEPS - 1:
        return openai_completion(f"done after {done} calls")
    arguments = json.dumps({"expression": f"{done} * 2"})
    return openai_completion(None, [openai_call(f"call_{done}", "calculator", arguments)])


def _spawn(mode: str, transport: str, runs: int, warmup: int, endpoint: str, provider_url: str) -> list[float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["BENCH_PROVIDER_URL"] = provider_url
    env["BENCH_SPAN_COUNTS"] = str(_SPAN_COUNTS)
    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
    if mode != "on":
        env.pop("OTEL_EXPORTER_OTLP_ENDPOINT")
    argv = [sys.executable, "-m", "bench.tracing_bench", "--child", mode, transport, str(runs), str(warmup)]
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"bench child {mode}/{transport} failed: {done.stderr[-2000:]}")
    times: list[float] = json.loads(done.stdout.strip().splitlines()[-1])
    return times


def run(
    rounds: int = 4,
    runs: int = 150,
    warmup: int = 30,
    transports: tuple[str, ...] = ("inproc", "provider", "stdio"),
    stdio_runs: int = 40,
) -> dict[str, Any]:
    """inproc: scripted model, in-process tool. provider: the OpenAI adapter over HTTP to a loopback provider (in
    this parent process), in-process tool. stdio: scripted model, the real tool server over stdio."""
    from tests.helpers.fake_providers import FakeProvider  # the repo's folders import as namespace packages
    from tests.helpers.otlp_sink import OtlpSink

    results: dict[str, Any] = {"steps_per_run": STEPS, "rounds": rounds, "target_overhead_pct": TARGET_OVERHEAD_PCT}
    with OtlpSink(decode=False) as sink, FakeProvider(_provider_reply) as provider:
        for transport in transports:
            n = runs if transport == "inproc" else stdio_runs
            samples: dict[str, list[float]] = {mode: [] for mode in MODES}
            for _ in range(rounds):
                for mode in MODES:
                    samples[mode] += _spawn(
                        mode, transport, n, warmup if transport == "inproc" else 5, sink.endpoint, provider.openai_url
                    )
            off = statistics.median(samples["off"])
            figures: dict[str, Any] = {"runs_per_mode": len(samples["off"]), "off_median_ms": round(off * 1000, 3)}
            for mode in MODES[1:-1]:
                med = statistics.median(samples[mode])
                figures[f"{mode}_median_ms"] = round(med * 1000, 3)
                figures[f"{mode}_overhead_pct"] = round((med - off) / off * 100, 2)
                figures[f"{mode}_per_step_overhead_us"] = round((med - off) / STEPS * 1e6, 1)
            bare = statistics.median(samples["bare"])  # already only the spans: no run to subtract
            figures["bare_spans_per_step_us"] = round(bare / STEPS * 1e6, 1)
            figures["spans_per_run"] = json.loads(_SPAN_COUNTS.read_text())["spans_per_run"]
            results[transport] = figures
        results["export_requests"] = sink.requests
        results["export_bytes"] = sink.bytes_received
    return results


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        print(json.dumps(run(), indent=2))
