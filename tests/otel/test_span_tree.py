"""The exact span tree of one real run (the loop, the OpenAI adapter against a loopback provider, in-process tools):
a retried model call, two parallel tool calls, a tool that fails and one that times out."""

import json
from collections.abc import Sequence
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from helpers.fake_providers import FakeProvider, Reply, openai_call, openai_completion
from helpers.telemetry import Telemetry
from toolwire_client.config import RunLimits
from toolwire_client.loop import Agent
from toolwire_client.models.openai_chat import OpenAIChatModel
from toolwire_client.models.retry import RetryPolicy
from toolwire_client.run.state import RunState
from toolwire_client.tools.registry_source import RegistrySource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_otel import content
from toolwire_server import Registry

API_KEY = "sk-test-0123456789abcdefSECRET"
USAGE_1 = {
    "prompt_tokens": 120,
    "completion_tokens": 30,
    "total_tokens": 150,
    "prompt_tokens_details": {"cached_tokens": 40},
}


def rate_limited() -> Reply:
    body = {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}
    return Reply(status=429, body=body, headers={"retry-after-ms": "250"})


def build_tools() -> tuple[RegistrySource, dict[str, anyio.Event]]:
    """meet_a and meet_b each wait for the other to have started: they can only finish if run concurrently."""
    started = {"a": anyio.Event(), "b": anyio.Event()}

    async def meet_a() -> str:
        started["a"].set()
        await started["b"].wait()
        return "a met b"

    async def meet_b() -> str:
        started["b"].set()
        await started["a"].wait()
        return "b met a"

    async def broken() -> str:
        raise RuntimeError("disk on fire")

    async def slow() -> str:
        await anyio.sleep_forever()
        return "never"

    registry = Registry("local")
    registry.add(meet_a, description="Meet b.", timeout_s=10)
    registry.add(meet_b, description="Meet a.", timeout_s=10)
    registry.add(broken, description="Always fails.")
    registry.add(slow, description="Never returns.", timeout_s=0.2)
    return RegistrySource(registry), started


async def run_scripted(fake: FakeProvider, waits: list[float]) -> RunState:
    fake.push(
        rate_limited(),
        openai_completion(
            tool_calls=[openai_call("call_a", "meet_a", "{}"), openai_call("call_b", "meet_b", "{}")], usage=USAGE_1
        ),
        openai_completion(tool_calls=[openai_call("call_c", "broken", "{}"), openai_call("call_d", "slow", "{}")]),
        openai_completion("Both met; broken failed and slow timed out."),
    )

    async def no_wait(seconds: float) -> None:
        waits.append(seconds)

    model = OpenAIChatModel(
        "gpt-test",
        api_key=API_KEY,
        base_url=fake.openai_url,
        retry=RetryPolicy(sleep=no_wait, uniform=lambda low, high: high),
    )
    source, _ = build_tools()
    try:
        return await Agent.of(model, ToolBox([source]), name="support", limits=RunLimits(max_steps=6)).run("go")
    finally:
        await model.aclose()


def assert_has(span: ReadableSpan, expected: dict[str, Any]) -> None:
    attrs = dict(span.attributes or {})
    wrong = {key: attrs.get(key) for key, value in expected.items() if attrs.get(key) != value}
    assert not wrong, f"{span.name}: expected {expected}, differing: {wrong}"


def tree(spans: Sequence[ReadableSpan]) -> list[Any]:
    """(name, kind, [children]) from the roots down; siblings sorted by name so parallel ones compare stably."""
    children: dict[int | None, list[ReadableSpan]] = {}
    for span in spans:
        children.setdefault(span.parent.span_id if span.parent else None, []).append(span)

    def build(span: ReadableSpan) -> tuple[str, str, list[Any]]:
        kids = sorted(children.get(span.context.span_id, []), key=lambda s: (s.name, s.start_time or 0))
        return (span.name, span.kind.name, [build(k) for k in kids])

    return [build(root) for root in children.get(None, [])]


async def test_run_span_tree_names_kinds_and_parents(telemetry: Telemetry) -> None:
    waits: list[float] = []
    with FakeProvider() as fake:
        state = await run_scripted(fake, waits)
    assert state.status == "done", state.report
    spans = telemetry.spans.get_finished_spans()
    chat, tool = ("chat gpt-test", "CLIENT", []), "INTERNAL"
    assert tree(spans) == [
        (
            "invoke_agent support",
            "INTERNAL",
            [
                chat,
                chat,
                chat,
                ("execute_tool broken", tool, []),
                ("execute_tool meet_a", tool, []),
                ("execute_tool meet_b", tool, []),
                ("execute_tool slow", tool, []),
            ],
        )
    ]
    assert len({s.context.trace_id for s in spans}) == 1
    assert state.trace_id == f"{spans[0].context.trace_id:032x}"


async def test_run_span_attributes(telemetry: Telemetry) -> None:
    waits: list[float] = []
    with FakeProvider() as fake:
        state = await run_scripted(fake, waits)
        port = fake.port
    spans = telemetry.spans.get_finished_spans()
    by_name: dict[str, list[ReadableSpan]] = {}
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        by_name.setdefault(span.name, []).append(span)
    run_id = state.run_id

    agent = by_name["invoke_agent support"][0]
    assert_has(
        agent,
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "support",
            "gen_ai.agent.id": "support",
            "gen_ai.conversation.id": run_id,
            "gen_ai.request.model": "gpt-test",
        },
    )

    first_chat = by_name["chat gpt-test"][0]
    assert first_chat.kind is SpanKind.CLIENT
    assert_has(
        first_chat,
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-test",
            "gen_ai.conversation.id": run_id,
            "server.address": "127.0.0.1",
            "server.port": port,
            "gen_ai.response.model": "gpt-fake",
            "gen_ai.response.id": "chatcmpl-fake",
            "gen_ai.usage.input_tokens": 120,
            "gen_ai.usage.output_tokens": 30,
            "gen_ai.usage.cache_read.input_tokens": 40,
        },
    )
    assert tuple(first_chat.attributes["gen_ai.response.finish_reasons"]) == ("tool_calls",)  # type: ignore[index,arg-type]
    # The retry: one event on the chat span that was retried, saying why and how long it waited.
    retries = [e for e in first_chat.events if e.name == "toolwire.retry"]
    assert len(retries) == 1 and waits == [0.25]
    assert retries[0].attributes is not None
    assert retries[0].attributes["toolwire.retry.attempt"] == 1
    assert retries[0].attributes["toolwire.retry.wait_s"] == 0.25
    assert "429" in str(retries[0].attributes["toolwire.retry.reason"])
    assert all(not [e for e in s.events if e.name == "toolwire.retry"] for s in by_name["chat gpt-test"][1:])

    meet_a, meet_b = by_name["execute_tool meet_a"][0], by_name["execute_tool meet_b"][0]
    for span, tool_name, call_id in ((meet_a, "meet_a", "call_a"), (meet_b, "meet_b", "call_b")):
        assert dict(span.attributes or {}) == {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool_name,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": "function",
            "gen_ai.conversation.id": run_id,
        }
        assert span.status.status_code is StatusCode.UNSET
    # Concurrent siblings: each started before the other ended (the tools could only finish together anyway).
    assert meet_a.start_time < meet_b.end_time and meet_b.start_time < meet_a.end_time  # type: ignore[operator]

    broken, slow = by_name["execute_tool broken"][0], by_name["execute_tool slow"][0]
    assert broken.attributes is not None and slow.attributes is not None
    assert broken.attributes["error.type"] == "tool_error"
    assert broken.attributes["toolwire.tool.error_kind"] == "tool_failed"
    assert broken.status.status_code is StatusCode.ERROR and "disk on fire" in (broken.status.description or "")
    assert slow.attributes["error.type"] == "timeout"
    assert slow.status.status_code is StatusCode.ERROR and "timed out" in (slow.status.description or "")
    # Tool spans of the second turn start after the chat that asked for them ended.
    second_chat = by_name["chat gpt-test"][1]
    assert broken.start_time >= second_chat.end_time  # type: ignore[operator]


def _points(telemetry: Telemetry, name: str) -> list[Any]:
    data = telemetry.metrics.get_metrics_data()
    found = []
    for resource in data.resource_metrics if data else []:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == name:
                    found += list(metric.data.data_points)
    return found


async def test_run_metrics(telemetry: Telemetry) -> None:
    with FakeProvider() as fake:
        await run_scripted(fake, [])
    data = telemetry.metrics.get_metrics_data()
    by_metric: dict[str, list[Any]] = {}
    for resource in data.resource_metrics if data else []:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                by_metric.setdefault(metric.name, []).extend(metric.data.data_points)
    chat_durations = [
        p for p in by_metric["gen_ai.client.operation.duration"] if p.attributes["gen_ai.operation.name"] == "chat"
    ]
    assert sum(p.count for p in chat_durations) == 3
    assert all(p.attributes["gen_ai.provider.name"] == "openai" for p in chat_durations)
    tokens = {p.attributes["gen_ai.token.type"]: p for p in by_metric["gen_ai.client.token.usage"]}
    assert tokens["input"].sum == 120 + 10 + 10 and tokens["output"].sum == 30 + 5 + 5
    outcomes = {
        (p.attributes["gen_ai.tool.name"], p.attributes["toolwire.tool.outcome"]): p.count
        for p in by_metric["toolwire.tool.call.duration"]
    }
    assert outcomes == {("meet_a", "ok"): 1, ("meet_b", "ok"): 1, ("broken", "tool_failed"): 1, ("slow", "timeout"): 1}


async def test_no_api_key_or_authorization_in_any_span(telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    with FakeProvider() as fake:
        await run_scripted(fake, [])
        assert fake.requests[0].headers["authorization"] == f"Bearer {API_KEY}"  # the key really was in use
    dumped = json.dumps([json.loads(s.to_json()) for s in telemetry.spans.get_finished_spans()])
    assert API_KEY not in dumped
    assert "authorization" not in dumped.lower() and "bearer" not in dumped.lower()


def test_captured_content_never_carries_a_key(telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry import trace

    from toolwire_shared.messages import AssistantMessage, SystemMessage, ToolCall, UserMessage

    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ant-key-from-env-0123456789")
    messages = [
        SystemMessage(content="be brief"),
        UserMessage(
            content="my keys: ant-key-from-env-0123456789 and sk-proj-abcdefghijkl; header Bearer abc.def.ghi.jkl"
        ),
    ]
    reply = AssistantMessage(text="ok", tool_calls=[ToolCall(id="c1", name="get_order", arguments={"order_id": "A1"})])
    with trace.get_tracer("test").start_as_current_span("chat x") as span:
        content.record_chat_content(span, messages, [], reply, "tool_calls")
    (finished,) = telemetry.spans.get_finished_spans()
    attrs = dict(finished.attributes or {})
    text = json.dumps(attrs)
    assert "ant-key-from-env" not in text and "sk-proj-abcdefghijkl" not in text and "abc.def.ghi.jkl" not in text
    assert json.loads(str(attrs["gen_ai.system_instructions"])) == [{"type": "text", "content": "be brief"}]
    assert json.loads(str(attrs["gen_ai.output.messages"])) == [
        {
            "role": "assistant",
            "finish_reason": "tool_calls",
            "parts": [
                {"type": "text", "content": "ok"},
                {"type": "tool_call", "id": "c1", "name": "get_order", "arguments": {"order_id": "A1"}},
            ],
        }
    ]
    (user,) = json.loads(str(attrs["gen_ai.input.messages"]))
    assert user["role"] == "user" and user["parts"][0]["content"].count("[REDACTED]") == 3


def test_a_resumed_run_links_to_the_span_where_it_paused(telemetry: Telemetry) -> None:
    from toolwire_otel import spans

    with spans.agent_span("support", "run_x") as first:
        ref = spans.span_ref(first)
    with spans.agent_span("support", "run_x", resumed_from=ref):
        pass
    with spans.agent_span("support", "run_x", resumed_from=ref.split("-")[0] if ref else None):
        pass
    paused, resumed, by_trace_only = telemetry.spans.get_finished_spans()
    assert [(link.context.trace_id, link.context.span_id) for link in resumed.links] == [
        (paused.context.trace_id, paused.context.span_id)
    ]
    assert [link.context.trace_id for link in by_trace_only.links] == [paused.context.trace_id]
    assert resumed.parent is None and resumed.context.trace_id != paused.context.trace_id
