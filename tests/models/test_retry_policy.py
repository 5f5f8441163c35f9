"""The shared retry policy: waits (full jitter, retry-after forms, caps), x-should-retry, give-up reasons, and the
retry events on the current span. Over a real loopback server; the sleep only records."""

import socket
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx2
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from helpers.fake_providers import FakeProvider, Reply, anthropic_message, error_reply, openai_completion
from toolwire_client.models.anthropic import AnthropicModel
from toolwire_client.models.base import ModelCallFailed
from toolwire_client.models.openai_chat import OpenAIChatModel
from toolwire_client.models.retry import RetryPolicy, retry_after_s
from toolwire_shared.messages import Message, UserMessage

HI: list[Message] = [UserMessage(content="hi")]


def test_full_jitter_draws_between_zero_and_the_capped_exponential() -> None:
    ceilings: list[tuple[float, float]] = []

    def uniform(low: float, high: float) -> float:
        ceilings.append((low, high))
        return high / 2

    policy = RetryPolicy(base_s=0.5, cap_s=8.0, uniform=uniform)
    waits = [policy.backoff(n) for n in range(6)]
    assert ceilings == [(0.0, 0.5), (0.0, 1.0), (0.0, 2.0), (0.0, 4.0), (0.0, 8.0), (0.0, 8.0)]
    assert waits == [0.25, 0.5, 1.0, 2.0, 4.0, 4.0]


def test_retry_after_forms() -> None:
    assert retry_after_s(httpx2.Headers({"retry-after-ms": "1500", "retry-after": "9"})) == 1.5
    assert retry_after_s(httpx2.Headers({"retry-after": "3"})) == 3.0
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 <= (retry_after_s(httpx2.Headers({"retry-after": when})) or 0) <= 31
    assert retry_after_s(httpx2.Headers({"retry-after": "soon"})) is None
    assert retry_after_s(httpx2.Headers({})) is None


async def test_server_asked_wait_is_capped(fake: FakeProvider, sleep: Any) -> None:
    fake.push(
        Reply(
            status=429,
            headers={"retry-after": "600"},
            body={"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}},
        ),
        openai_completion("ok"),
    )
    model = OpenAIChatModel("m", api_key="k", base_url=fake.openai_url, retry=RetryPolicy(max_wait_s=20.0, sleep=sleep))
    await model.complete(HI, [])
    assert sleep.waits == [20.0]
    await model.aclose()


async def test_gives_up_after_max_tries_with_a_readable_reason(fake: FakeProvider, sleep: Any) -> None:
    fake.push(*[error_reply("anthropic", "529_overloaded") for _ in range(4)], anthropic_message("too late"))
    model = AnthropicModel("m", api_key="k", base_url=fake.anthropic_url, retry=RetryPolicy(max_tries=4, sleep=sleep))
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with (
        trace.use_span(provider.get_tracer("test").start_span("chat m"), end_on_exit=True),
        pytest.raises(ModelCallFailed) as caught,
    ):
        await model.complete(HI, [])
    assert caught.value.reason.startswith("anthropic returned 529 overloaded_error 4 times; gave up after 4 tries")
    assert (caught.value.status, caught.value.retryable, caught.value.attempts) == (529, True, 4)
    assert len(fake.requests) == 4 and len(sleep.waits) == 3
    (span,) = exporter.get_finished_spans()
    events = [(e.name, dict(e.attributes or {})) for e in span.events]
    assert [e[1]["toolwire.retry.attempt"] for e in events] == [1, 2, 3]
    assert all(
        e[0] == "toolwire.retry" and e[1]["toolwire.retry.reason"] == "anthropic: 529 overloaded_error" for e in events
    )
    assert [e[1]["toolwire.retry.wait_s"] for e in events] == sleep.waits
    await model.aclose()


async def test_x_should_retry_header_is_obeyed(fake: FakeProvider, sleep: Any) -> None:
    no = {"x-should-retry": "false"}
    yes = {"x-should-retry": "true"}
    fake.push(
        Reply(status=400, headers=yes, body={"error": {"message": "transient", "type": "x"}}),
        openai_completion("second try"),
        Reply(status=503, headers=no, body={"error": {"message": "do not", "type": "server_error"}}),
        openai_completion("never"),
    )
    model = OpenAIChatModel("m", api_key="k", base_url=fake.openai_url, retry=RetryPolicy(sleep=sleep))
    assert (await model.complete(HI, [])).message.text == "second try"
    with pytest.raises(ModelCallFailed) as caught:
        await model.complete(HI, [])
    assert caught.value.status == 503 and not caught.value.retryable
    assert len(fake.requests) == 3
    await model.aclose()


async def test_402_is_a_billing_stop(fake: FakeProvider, sleep: Any) -> None:
    body = {"type": "error", "error": {"type": "billing_error", "message": "Your credit balance is too low."}}
    fake.push(Reply(status=402, body=body), anthropic_message("never"))
    model = AnthropicModel("m", api_key="k", base_url=fake.anthropic_url, retry=RetryPolicy(sleep=sleep))
    with pytest.raises(ModelCallFailed, match="billing stop"):
        await model.complete(HI, [])
    assert len(fake.requests) == 1 and sleep.waits == []
    await model.aclose()


async def test_connection_errors_are_retried_then_reported(sleep: Any) -> None:
    with socket.socket() as sock:  # a port nobody listens on: bind, read the number, close
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = OpenAIChatModel(
        "m", api_key="k", base_url=f"http://127.0.0.1:{port}/v1", retry=RetryPolicy(max_tries=3, sleep=sleep)
    )
    with pytest.raises(ModelCallFailed) as caught:
        await model.complete(HI, [])
    assert caught.value.reason.startswith("openai hit a connection error (ConnectError) 3 times; gave up after 3 tries")
    assert caught.value.retryable and caught.value.status is None and len(sleep.waits) == 2
    await model.aclose()


async def test_unreadable_success_body_is_a_clear_failure(fake: FakeProvider, sleep: Any) -> None:
    fake.push(Reply(status=200, body={"id": "chatcmpl-x", "choices": []}))
    model = OpenAIChatModel("m", api_key="k", base_url=fake.openai_url, retry=RetryPolicy(sleep=sleep))
    with pytest.raises(ModelCallFailed, match="could not read: no choices"):
        await model.complete(HI, [])
    await model.aclose()
