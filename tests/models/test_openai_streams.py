"""Streaming for both OpenAI APIs (and the on_text seam for every streaming adapter): text deltas delivered live
and in order, tool-call arguments joined across chunks, usage from the last chunk / response.completed, and a
stream that breaks (dropped connection, no final event, an error event) retried whole like a failed call."""

from typing import Any

import pytest

from helpers.fake_providers import (
    FakeProvider,
    Reply,
    fixture_reply,
    load_fixture,
    openai_chat_stream,
    responses_call,
    responses_message,
    responses_reply,
    responses_stream,
)
from helpers.fixture_chat import fixture_tools, paris_question
from toolwire_client.models.anthropic import AnthropicModel
from toolwire_client.models.base import ModelCallFailed
from toolwire_client.models.openai_chat import OpenAIChatModel
from toolwire_client.models.openai_responses import OpenAIResponsesModel
from toolwire_client.models.retry import RetryPolicy

KEY = "sk-test"
CHAT_STREAM = "openai_chat_1_stream.json"
RESPONSES = "openai_responses_1_function_calls.json"


class Deltas:
    """An on_text callback that keeps what it was given, in order."""

    def __init__(self) -> None:
        self.got: list[str] = []

    def __call__(self, text: str) -> None:
        self.got.append(text)


def chat(fake: FakeProvider, policy: RetryPolicy, deltas: Deltas | None = None) -> OpenAIChatModel:
    return OpenAIChatModel(
        "gpt-4.1-mini",
        api_key=KEY,
        base_url=fake.openai_url,
        max_tokens=1024,
        stream=True,
        retry=policy,
        on_text=deltas,
    )


def responses(fake: FakeProvider, policy: RetryPolicy, deltas: Deltas | None = None) -> OpenAIResponsesModel:
    return OpenAIResponsesModel(
        "gpt-4.1-mini", api_key=KEY, base_url=fake.openai_url, stream=True, retry=policy, on_text=deltas
    )


def cut(reply: Reply, keep: int, *, drop: bool) -> Reply:
    """The first `keep` frames of a stream: then the connection drops (drop) or the body just ends there."""
    assert reply.sse is not None
    if drop:
        return Reply(headers=reply.headers, sse=reply.sse, drop_after=keep)
    return Reply(headers=reply.headers, sse=reply.sse[:keep])


# ---- Chat Completions --------------------------------------------------------------------------------------------
async def test_chat_fixture_stream_golden_request_and_calls_joined_by_index(
    fake: FakeProvider, policy: RetryPolicy
) -> None:
    fake.push(fixture_reply(CHAT_STREAM))
    model = chat(fake, policy)
    reply = await model.complete(paris_question(), fixture_tools(CHAT_STREAM))
    assert fake.requests[0].body == load_fixture(CHAT_STREAM)["request"]["body"]  # stream + include_usage
    assert [(c.id, c.name, c.arguments, c.raw_arguments) for c in reply.message.tool_calls] == [
        ("call_Fake00000000000000000AA", "get_weather", {"city": "Paris"}, '{"city":"Paris"}'),  # '{"ci' + 'ty":…'
        ("call_Fake00000000000000000BB", "get_local_time", {"city": "Paris"}, '{"city":"Paris"}'),
    ]
    assert (reply.finish_reason, reply.usage.input_tokens, reply.usage.output_tokens) == ("tool_calls", 118, 49)
    assert reply.response_id == "chatcmpl-Fake0000000000000000000001"
    await model.aclose()


async def test_chat_text_deltas_reach_on_text_in_order(fake: FakeProvider, policy: RetryPolicy) -> None:
    pieces = ["In Paris ", "it is 14 °C", " with light rain."]
    usage = {"prompt_tokens": 50, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 32}}
    fake.push(openai_chat_stream(pieces, usage=usage))
    deltas = Deltas()
    model = chat(fake, policy, deltas)
    reply = await model.complete(paris_question(), [])
    assert deltas.got == pieces
    assert reply.message.text == "".join(pieces) and reply.finish_reason == "stop"
    assert (reply.usage.input_tokens, reply.usage.cache_read_tokens, reply.usage.output_tokens) == (50, 32, 9)
    await model.aclose()


def _chunk(delta: dict[str, Any]) -> tuple[None, dict[str, Any]]:
    return None, {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}


async def test_chat_stream_quirks_index_reused_missing_and_whole_object(
    fake: FakeProvider, policy: RetryPolicy
) -> None:
    """Ollama numbers every call 0 (a new id starts a new call); Gemini's compat layer sends no index; a local
    server sends the arguments object whole; llama-cpp-python repeats id and name in every fragment."""
    frames = [
        _chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "a", "arguments": '{"x":'}}]}),
        _chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "a", "arguments": " 1}"}}]}),
        _chunk({"tool_calls": [{"index": 0, "id": "c2", "function": {"name": "b", "arguments": {"y": 2}}}]}),
        _chunk({"tool_calls": [{"id": "c3", "function": {"name": "c", "arguments": '{"z"'}}]}),
        _chunk({"tool_calls": [{"function": {"arguments": ": 3}"}}]}),
        (None, "[DONE]"),
    ]
    fake.push(Reply(sse=frames))
    model = chat(fake, policy)
    calls = (await model.complete(paris_question(), [])).message.tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("c1", "a", {"x": 1}),
        ("c2", "b", {"y": 2}),
        ("c3", "c", {"z": 3}),
    ]
    await model.aclose()


@pytest.mark.parametrize("drop", [True, False], ids=["connection-dropped", "no-DONE"])
async def test_chat_broken_stream_is_retried_then_succeeds(
    fake: FakeProvider, sleep: Any, policy: RetryPolicy, drop: bool
) -> None:
    good = fixture_reply(CHAT_STREAM)
    fake.push(cut(good, 4, drop=drop), good)
    model = chat(fake, policy)
    reply = await model.complete(paris_question(), fixture_tools(CHAT_STREAM))
    assert (len(fake.requests), len(sleep.waits), reply.attempts) == (2, 1, 2)
    assert [c.id for c in reply.message.tool_calls] == ["call_Fake00000000000000000AA", "call_Fake00000000000000000BB"]
    await model.aclose()


async def test_chat_error_frame_every_time_gives_up_readably(fake: FakeProvider, sleep: Any) -> None:
    error = {"error": {"message": "The server had an error while processing your request.", "type": "server_error"}}
    broken = Reply(sse=[*(openai_chat_stream(["Hel"]).sse or [])[:2], (None, error)])
    fake.push(broken, broken)
    model = chat(fake, RetryPolicy(max_tries=2, sleep=sleep))
    with pytest.raises(ModelCallFailed) as caught:
        await model.complete(paris_question(), [])
    assert caught.value.reason == (
        "openai hit server_error mid-stream 2 times; gave up after 2 tries "
        "(last error: The server had an error while processing your request.)"
    )
    assert caught.value.retryable and len(sleep.waits) == 1
    await model.aclose()


# ---- Responses ---------------------------------------------------------------------------------------------------
def paris_turn() -> Reply:
    text = responses_message("I'll look up both for Paris.", item_id="msg_1")
    calls = [
        responses_call("call_A", "get_weather", '{"city": "Paris"}'),
        responses_call("call_B", "get_local_time", '{"city": "Paris"}'),
    ]
    usage = {
        "input_tokens": 118,
        "input_tokens_details": {"cached_tokens": 64},
        "output_tokens": 49,
        "output_tokens_details": {"reasoning_tokens": 12},
        "total_tokens": 167,
    }
    return responses_reply([text, *calls], usage=usage, response_id="resp_streamed")


async def test_responses_stream_assembles_text_calls_and_usage(fake: FakeProvider, policy: RetryPolicy) -> None:
    fake.push(responses_stream(paris_turn()))
    deltas = Deltas()
    model = responses(fake, policy, deltas)
    reply = await model.complete(paris_question(), fixture_tools(RESPONSES))
    assert fake.requests[0].body == {**load_fixture(RESPONSES)["request"]["body"], "stream": True}
    assert deltas.got == ["I'll ", "look ", "up ", "both ", "for ", "Paris."]
    assert reply.message.text == "I'll look up both for Paris."
    assert [(c.id, c.arguments) for c in reply.message.tool_calls] == [
        ("call_A", {"city": "Paris"}),
        ("call_B", {"city": "Paris"}),
    ]
    assert reply.message.provider_content == paris_turn().body["output"]  # the whole items, as if not streamed
    usage = reply.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens, usage.reasoning_tokens) == (
        118,
        64,
        49,
        12,
    )
    assert (reply.finish_reason, reply.response_id) == ("tool_calls", "resp_streamed")
    await model.aclose()


async def test_responses_arguments_are_joined_from_deltas_alone(fake: FakeProvider, policy: RetryPolicy) -> None:
    """Without output_item.done and with an empty output in response.completed, the deltas still make the call."""
    stream = responses_stream(paris_turn())
    assert stream.sse is not None
    frames = [
        (e, d) for e, d in stream.sse if e not in ("response.output_item.done", "response.function_call_arguments.done")
    ]
    event, final = frames[-1]
    frames[-1] = (event, {**final, "response": {**final["response"], "output": []}})
    fake.push(Reply(sse=frames))
    model = responses(fake, policy)
    reply = await model.complete(paris_question(), fixture_tools(RESPONSES))
    assert [(c.name, c.raw_arguments) for c in reply.message.tool_calls] == [
        ("get_weather", '{"city": "Paris"}'),
        ("get_local_time", '{"city": "Paris"}'),
    ]
    assert reply.message.text == "I'll look up both for Paris."
    await model.aclose()


@pytest.mark.parametrize("drop", [True, False], ids=["connection-dropped", "no-completed-event"])
async def test_responses_broken_stream_is_retried_then_succeeds(
    fake: FakeProvider, sleep: Any, policy: RetryPolicy, drop: bool
) -> None:
    good = responses_stream(paris_turn())
    assert good.sse is not None
    fake.push(cut(good, len(good.sse) - 3, drop=drop), good)
    deltas = Deltas()
    model = responses(fake, policy, deltas)
    reply = await model.complete(paris_question(), fixture_tools(RESPONSES))
    assert (len(fake.requests), len(sleep.waits), len(reply.message.tool_calls)) == (2, 1, 2)
    words = ["I'll ", "look ", "up ", "both ", "for ", "Paris."]
    assert deltas.got == words + words  # the broken attempt's text was shown, then the retry's from the start
    await model.aclose()


async def test_responses_error_event_is_retried_like_a_failed_call(
    fake: FakeProvider, sleep: Any, policy: RetryPolicy
) -> None:
    good = responses_stream(paris_turn())
    assert good.sse is not None
    error = {"type": "error", "code": "server_error", "message": "An error occurred.", "param": None}
    fake.push(Reply(sse=[*good.sse[:5], ("error", error)]), good)
    model = responses(fake, policy)
    reply = await model.complete(paris_question(), fixture_tools(RESPONSES))
    assert (len(fake.requests), reply.attempts, len(reply.message.tool_calls)) == (2, 2, 2)

    fake.push(Reply(sse=[("error", error)]), Reply(sse=[("error", error)]))
    once_more = responses(fake, RetryPolicy(max_tries=2, sleep=sleep))
    with pytest.raises(ModelCallFailed) as caught:
        await once_more.complete(paris_question(), [])
    assert caught.value.reason.startswith("openai hit server_error mid-stream 2 times; gave up after 2 tries")
    await model.aclose()
    await once_more.aclose()


async def test_responses_incomplete_stream_keeps_its_text_and_says_length(
    fake: FakeProvider, policy: RetryPolicy
) -> None:
    fake.push(
        responses_stream(
            responses_reply([responses_message("In Paris")], status="incomplete", incomplete_reason="max_output_tokens")
        )
    )
    reply = await responses(fake, policy).complete(paris_question(), [])
    assert (reply.message.text, reply.finish_reason) == ("In Paris", "length")


async def test_http_error_before_a_stream_uses_the_same_retry_policy(
    fake: FakeProvider, sleep: Any, policy: RetryPolicy
) -> None:
    from helpers.fake_providers import error_reply

    fake.push(error_reply("openai", "429_rate_limit"), responses_stream(paris_turn()))
    reply = await responses(fake, policy).complete(paris_question(), [])
    assert sleep.waits == [2.0] and reply.attempts == 2


# ---- the same seam in the Anthropic adapter ----------------------------------------------------------------------
async def test_anthropic_stream_text_reaches_on_text_too(fake: FakeProvider, policy: RetryPolicy) -> None:
    fake.push(fixture_reply("anthropic_1_stream.json"))
    deltas = Deltas()
    model = AnthropicModel(
        "claude-sonnet-4-5",
        api_key="sk-ant-test",
        base_url=fake.anthropic_url,
        stream=True,
        retry=policy,
        on_text=deltas,
    )
    reply = await model.complete(paris_question(), fixture_tools("anthropic_1_stream.json"))
    assert deltas.got == ["I'll look up the weather", " and the local time in Paris."]
    assert reply.message.text == "".join(deltas.got)
    await model.aclose()
