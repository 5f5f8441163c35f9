"""Anthropic streaming: the fixture's SSE stream reassembles to the same turn, and an `error` event mid-stream is
retried like a 529 (nothing from the broken stream was acted on)."""

from typing import Any

import pytest

from helpers.fake_providers import FakeProvider, Reply, fixture_reply, load_fixture
from helpers.fixture_chat import fixture_tools, paris_question
from toolwire_client.models.anthropic import AnthropicModel
from toolwire_client.models.base import ModelCallFailed
from toolwire_client.models.retry import RetryPolicy

STREAM = "anthropic_1_stream.json"


def streaming(fake: FakeProvider, policy: RetryPolicy) -> AnthropicModel:
    return AnthropicModel(
        "claude-sonnet-4-5",
        api_key="sk-ant-test",
        base_url=fake.anthropic_url,
        max_tokens=1024,
        stream=True,
        retry=policy,
    )


async def test_stream_reassembles_to_the_non_streamed_turn(fake: FakeProvider, policy: RetryPolicy) -> None:
    fake.push(fixture_reply("anthropic_1_stream.json"))
    model = streaming(fake, policy)
    reply = await model.complete(paris_question(), fixture_tools(STREAM))
    expected = load_fixture("anthropic_1_stream.json")["request"]["body"]
    expected["tools"][-1]["cache_control"] = {"type": "ephemeral"}  # the breakpoints beside the fixture's system one
    question = expected["messages"][0]["content"]
    expected["messages"][0]["content"] = [{"type": "text", "text": question, "cache_control": {"type": "ephemeral"}}]
    assert fake.requests[0].body == expected
    whole = load_fixture("anthropic_1_parallel_tool_use.json")["response"]["body"]
    assert reply.message.provider_content == whole["content"]  # split input_json_delta joined, text deltas joined
    assert [(c.name, c.arguments) for c in reply.message.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_local_time", {"city": "Paris"}),
    ]
    assert reply.finish_reason == "tool_use"
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (412, 96)  # output from the cumulative delta
    await model.aclose()


def broken_stream() -> Reply:
    """The fixture stream up to its first tool_use block, then the fixture's mid-stream error frame."""
    good = fixture_reply("anthropic_1_stream.json")
    assert good.sse is not None
    cut = next(i for i, (event, data) in enumerate(good.sse) if event == "content_block_stop" and data["index"] == 1)
    event, data = load_fixture("anthropic_errors.json")["stream_error_event"]
    return Reply(status=200, headers=good.headers, sse=[*good.sse[: cut + 1], (event, data)])


async def test_error_event_mid_stream_is_retried(fake: FakeProvider, sleep: Any, policy: RetryPolicy) -> None:
    fake.push(broken_stream(), fixture_reply("anthropic_1_stream.json"))
    model = streaming(fake, policy)
    reply = await model.complete(paris_question(), fixture_tools(STREAM))
    assert len(fake.requests) == 2 and len(sleep.waits) == 1
    assert [c.id for c in reply.message.tool_calls] == [
        "toolu_01WxYz0000000000000000AA",
        "toolu_01WxYz0000000000000000BB",
    ]
    await model.aclose()


async def test_error_events_every_time_give_up_readably(fake: FakeProvider, sleep: Any) -> None:
    fake.push(broken_stream(), broken_stream())
    model = streaming(fake, RetryPolicy(max_tries=2, sleep=sleep))
    with pytest.raises(ModelCallFailed) as caught:
        await model.complete(paris_question(), fixture_tools(STREAM))
    assert caught.value.reason.startswith("anthropic hit overloaded_error mid-stream 2 times; gave up after 2 tries")
    assert caught.value.retryable
    await model.aclose()


async def test_stream_cut_short_is_retried(fake: FakeProvider, sleep: Any, policy: RetryPolicy) -> None:
    good = fixture_reply("anthropic_1_stream.json")
    assert good.sse is not None
    fake.push(Reply(status=200, headers=good.headers, sse=good.sse[:5]), good)
    model = streaming(fake, policy)
    reply = await model.complete(paris_question(), fixture_tools(STREAM))
    assert len(fake.requests) == 2 and len(reply.message.tool_calls) == 2
    await model.aclose()


async def test_http_error_before_the_stream_is_retried(fake: FakeProvider, sleep: Any, policy: RetryPolicy) -> None:
    from helpers.fake_providers import error_reply

    fake.push(error_reply("anthropic", "429_rate_limit"), fixture_reply("anthropic_1_stream.json"))
    model = streaming(fake, policy)
    await model.complete(paris_question(), fixture_tools(STREAM))
    assert sleep.waits == [7.0]
    await model.aclose()


async def test_a_streamed_reply_keeps_what_context_editing_cleared(fake: FakeProvider, policy: RetryPolicy) -> None:
    """The message_delta event carries `context_management` beside its delta (anthropic-sdk-python's
    BetaRawMessageDeltaEvent): the streamed reply records it as the whole reply does."""
    reply = fixture_reply("anthropic_1_stream.json")
    assert reply.sse is not None
    edits = [{"type": "clear_tool_uses_20250919", "cleared_tool_uses": 4, "cleared_input_tokens": 12_000}]
    frames = [
        (event, {**data, "context_management": {"applied_edits": edits}} if event == "message_delta" else data)
        for event, data in reply.sse
    ]
    fake.push(Reply(status=200, headers=reply.headers, sse=frames))
    model = streaming(fake, policy)
    assert (await model.complete(paris_question(), fixture_tools(STREAM))).applied_edits == edits
    await model.aclose()
