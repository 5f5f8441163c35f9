"""The Responses API adapter against the loopback fake: the fixtures' two-turn exchange (golden requests), items
echoed unchanged (reasoning included), results matched by call_id, usage, incomplete replies and error bodies."""

import json
from dataclasses import replace
from typing import Any

import pytest

from helpers.fake_providers import (
    FakeProvider,
    Reply,
    error_reply,
    fixture_reply,
    load_fixture,
    responses_call,
    responses_message,
    responses_reasoning,
    responses_reply,
)
from helpers.fixture_chat import fixture_tools, local_time_result, paris_question, weather_result
from toolwire_client.models import make_model
from toolwire_client.models.base import ModelCallFailed
from toolwire_client.models.openai_responses import ITEMS, OpenAIResponsesModel
from toolwire_client.models.pricing import Price
from toolwire_client.models.retry import RetryPolicy
from toolwire_client.run.call_ids import unique_call_ids
from toolwire_shared.messages import AssistantMessage, ToolCall, UserMessage, dump_messages, load_messages
from toolwire_shared.usage import Usage

KEY = "sk-test"
FIRST, SECOND = "openai_responses_1_function_calls.json", "openai_responses_2_final_answer.json"
LOCAL_TIME = '{"city": "Paris", "local_time": "2026-12-02T09:41:00+01:00"}'


def model_for(fake: FakeProvider, policy: RetryPolicy, **kw: Any) -> OpenAIResponsesModel:
    return OpenAIResponsesModel("gpt-4.1-mini", api_key=KEY, base_url=fake.openai_url, retry=policy, **kw)


async def test_fixture_exchange_golden_requests_and_parallel_calls(fake: FakeProvider, policy: RetryPolicy) -> None:
    fake.push(fixture_reply(FIRST), fixture_reply(SECOND))
    model = model_for(fake, policy)
    messages = paris_question()
    first = await model.complete(messages, fixture_tools(FIRST))
    sent = fake.requests[0]
    assert (sent.path, sent.headers["authorization"]) == ("/v1/responses", f"Bearer {KEY}")
    assert sent.body == load_fixture(FIRST)["request"]["body"]  # instructions, flat tools, store false, no include
    assert [(c.id, c.name, c.arguments, c.raw_arguments) for c in first.message.tool_calls] == [
        ("call_Fake00000000000000000AA", "get_weather", {"city": "Paris"}, '{"city":"Paris"}'),
        ("call_Fake00000000000000000BB", "get_local_time", {"city": "Paris"}, '{"city":"Paris"}'),
    ]
    assert (first.finish_reason, first.response_id, first.message.provider) == ("tool_calls", "resp_Fake0001", ITEMS)

    # the results come back in the other order: each is matched by its call_id, not by position
    messages += [
        first.message,
        local_time_result("call_Fake00000000000000000BB", LOCAL_TIME),
        weather_result("call_Fake00000000000000000AA"),
    ]
    final = await model.complete(messages, fixture_tools(FIRST))
    expected = load_fixture(SECOND)["request"]["body"]
    outputs = expected["input"][3:]
    expected["input"][3:] = [outputs[1], outputs[0]]
    assert fake.requests[1].body == expected  # function_call items echoed with their fc_ ids, outputs by call_id
    assert final.message.text.startswith("In Paris it is 14") and final.message.tool_calls == []
    assert final.finish_reason == "stop"
    await model.aclose()


async def test_reasoning_items_are_echoed_unchanged(fake: FakeProvider, policy: RetryPolicy) -> None:
    reasoning = responses_reasoning("rs_01", encrypted="gAAAA-secret-state==")
    call = responses_call("call_w", "get_weather", '{"city": "Paris"}')
    fake.push(responses_reply([reasoning, call]), responses_reply([responses_message("14 C")]))
    model = OpenAIResponsesModel("o4-mini", api_key=KEY, base_url=fake.openai_url, retry=policy)
    messages = paris_question()
    first = await model.complete(messages, fixture_tools(FIRST))
    assert fake.requests[0].body["include"] == ["reasoning.encrypted_content"]  # store false: the only way back
    # the saved turn goes through JSON (the run store) before it is echoed
    saved = load_messages(json.loads(json.dumps(dump_messages([first.message]))))[0]
    await model.complete([*messages, saved, weather_result("call_w")], fixture_tools(FIRST))
    echoed = fake.requests[1].body["input"]
    assert echoed[1:] == [
        reasoning,
        call,
        {"type": "function_call_output", "call_id": "call_w", "output": weather_result("call_w").content},
    ]
    await model.aclose()


async def test_malformed_arguments_keep_the_raw_text_and_set_parse_error(
    fake: FakeProvider, policy: RetryPolicy
) -> None:
    fake.push(responses_reply([responses_call("call_1", "get_weather", '{"city": "Par')]))
    model = model_for(fake, policy)
    (bad,) = (await model.complete(paris_question(), fixture_tools(FIRST))).message.tool_calls
    assert (bad.id, bad.raw_arguments, bad.arguments) == ("call_1", '{"city": "Par', {})
    assert bad.parse_error is not None and bad.parse_error.startswith("invalid JSON")
    await model.aclose()


def test_calls_without_a_call_id_are_renamed_in_the_echoed_items_too() -> None:
    from toolwire_client.models.openai_responses import parse_output

    items = [responses_call("", "get_weather", "{}", item_id="fc_1"), responses_call("", "get_local_time", "{}")]
    message = unique_call_ids(parse_output(items))
    ids = [c.id for c in message.tool_calls]
    assert len(set(ids)) == 2 and all(ids)
    assert message.provider_content is not None
    assert [i["call_id"] for i in message.provider_content] == ids  # the result's call_id matches the echoed call
    assert message.provider_content[0]["id"] == "fc_1"


async def test_history_from_another_adapter_is_rebuilt_as_items(fake: FakeProvider, policy: RetryPolicy) -> None:
    fake.push(responses_reply([responses_message("ok")]))
    model = model_for(fake, policy)
    other = AssistantMessage(
        text="Looking.",
        tool_calls=[ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Paris"})],
        provider="anthropic",
        provider_content=[{"type": "text", "text": "Looking."}],
    )
    await model.complete([UserMessage(content="hi"), other, weather_result("toolu_1")], [])
    assert fake.requests[0].body["input"][1:3] == [
        {"role": "assistant", "content": "Looking."},
        {"type": "function_call", "call_id": "toolu_1", "name": "get_weather", "arguments": '{"city": "Paris"}'},
    ]
    assert "instructions" not in fake.requests[0].body and "tools" not in fake.requests[0].body
    await model.aclose()


async def test_usage_counts_cached_and_reasoning_tokens_once(fake: FakeProvider, policy: RetryPolicy) -> None:
    usage = {
        "input_tokens": 2000,
        "input_tokens_details": {"cached_tokens": 1536, "cache_write_tokens": 0},
        "output_tokens": 300,
        "output_tokens_details": {"reasoning_tokens": 256},
        "total_tokens": 2300,
    }
    fake.push(responses_reply([responses_message("ok")], usage=usage))
    model = model_for(fake, policy)
    got = (await model.complete(paris_question(), [])).usage
    assert (got.input_tokens, got.cache_read_tokens, got.output_tokens, got.reasoning_tokens) == (2000, 1536, 300, 256)
    # reasoning tokens are part of output_tokens: the price is the same as for plain output tokens
    price = Price(input=2.0, output=8.0, cache_read=0.5)
    assert price.cost(got) == price.cost(replace(got, reasoning_tokens=0))
    assert price.cost(got) == pytest.approx((464 * 2.0 + 1536 * 0.5 + 300 * 8.0) / 1e6)
    assert (got + got).reasoning_tokens == 512 and (got + Usage()).total_tokens == 2300
    await model.aclose()


async def test_budget_caps_max_output_tokens(fake: FakeProvider, policy: RetryPolicy) -> None:
    fake.push(responses_reply([responses_message("ok")]), responses_reply([responses_message("ok")]))
    model = model_for(fake, policy, max_tokens=1024)
    await model.complete(paris_question(), [], max_output_tokens=300)
    await model.complete(paris_question(), [], max_output_tokens=5000)
    assert [r.body["max_output_tokens"] for r in fake.requests] == [300, 1024]
    await model.aclose()


async def test_incomplete_status_maps_to_a_finish_reason(fake: FakeProvider, policy: RetryPolicy) -> None:
    cut = responses_reply(
        [responses_message("In Paris it is")], status="incomplete", incomplete_reason="max_output_tokens"
    )
    filtered = responses_reply([], status="incomplete", incomplete_reason="content_filter")
    fake.push(cut, filtered)
    model = model_for(fake, policy)
    first = await model.complete(paris_question(), [])
    assert (first.finish_reason, first.message.text) == ("length", "In Paris it is")
    assert (await model.complete(paris_question(), [])).finish_reason == "content_filter"
    await model.aclose()


async def test_429_is_retried_after_retry_after(fake: FakeProvider, sleep: Any, policy: RetryPolicy) -> None:
    fake.push(error_reply("openai", "429_rate_limit"), responses_reply([responses_message("ok")]))
    model = model_for(fake, policy)
    reply = await model.complete(paris_question(), [])
    assert (reply.message.text, reply.attempts, sleep.waits) == ("ok", 2, [2.0])  # the fixture's retry-after: 2
    assert [r.path for r in fake.requests] == ["/v1/responses", "/v1/responses"]
    await model.aclose()


async def test_400_is_not_retried_and_says_why(fake: FakeProvider, sleep: Any, policy: RetryPolicy) -> None:
    said = "No tool output found for function call call_Fake00000000000000000BB."
    body = {"error": {"message": said, "type": "invalid_request_error", "param": "input", "code": None}}
    fake.push(Reply(status=400, body=body), responses_reply([responses_message("never")]))
    model = model_for(fake, policy)
    with pytest.raises(ModelCallFailed) as caught:
        await model.complete(paris_question(), [])
    assert caught.value.reason == f"openai returned 400 invalid_request_error: {said}; not retried"
    assert (caught.value.status, caught.value.retryable, len(fake.requests), sleep.waits) == (400, False, 1, [])
    await model.aclose()


async def test_insufficient_quota_is_a_billing_stop(fake: FakeProvider, sleep: Any, policy: RetryPolicy) -> None:
    fake.push(error_reply("openai", "429_insufficient_quota_DO_NOT_RETRY"))
    model = model_for(fake, policy)
    with pytest.raises(ModelCallFailed) as caught:
        await model.complete(paris_question(), [])
    assert "billing stop" in caught.value.reason and KEY not in caught.value.reason and sleep.waits == []
    await model.aclose()


async def test_a_failed_response_is_reported_readably(fake: FakeProvider, policy: RetryPolicy) -> None:
    failed = responses_reply([], status="failed")
    failed.body["error"] = {"code": "server_error", "message": "The model failed to generate a response."}
    fake.push(failed)
    model = model_for(fake, policy)
    with pytest.raises(ModelCallFailed) as caught:
        await model.complete(paris_question(), [])
    assert caught.value.reason == (
        "openai returned a failed response (server_error: The model failed to generate a response.); not retried"
    )
    await model.aclose()


def test_the_provider_row_builds_it_with_the_openai_key_and_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    model = make_model("openai-responses:gpt-4.1", stream=True, tool_choice="get_weather")
    assert isinstance(model, OpenAIResponsesModel) and model.stream and model._api_key == "sk-from-env"
    assert model.base_url == "http://127.0.0.1:9/v1"
    body = model.request_body(paris_question(), fixture_tools(FIRST))
    assert body["tool_choice"] == {"type": "function", "name": "get_weather"} and body["stream"] is True
    assert make_model("openai-responses", base_url="http://127.0.0.1:8/v1").model == "gpt-4.1-mini"


def test_an_agent_built_from_the_model_saves_the_responses_spec() -> None:
    from toolwire_client.loop import Agent
    from toolwire_client.tools.toolbox import ToolBox

    model = OpenAIResponsesModel("gpt-4.1-mini", api_key="sk-test")
    assert Agent(model, ToolBox([])).config.model == "openai-responses:gpt-4.1-mini"
