"""The Chat Completions adapter against a loopback server: the fixtures' exchange and each local-server quirk."""

from typing import Any

from helpers.fake_providers import (
    FakeProvider,
    RecordedRequest,
    Reply,
    error_reply,
    fixture_reply,
    load_fixture,
    openai_call,
    openai_completion,
)
from helpers.fixture_chat import fixture_tools, local_time_result, paris_question, weather_result
from toolwire_client import texts
from toolwire_client.models.base import ModelCallFailed
from toolwire_client.models.openai_chat import REFUSES_EXPLICIT_AUTO, OpenAIChatModel
from toolwire_client.models.retry import RetryPolicy
from toolwire_shared.messages import ToolResultMessage

KEY = "sk-test"
TOOLS = "openai_chat_1_parallel_tool_calls.json"


def model_for(fake: FakeProvider, policy: RetryPolicy, **kw: Any) -> OpenAIChatModel:
    kw.setdefault("max_tokens", 1024)
    return OpenAIChatModel("gpt-4.1-mini", api_key=KEY, base_url=fake.openai_url, retry=policy, **kw)


async def test_two_parallel_calls_then_final_answer(fake: FakeProvider, policy: RetryPolicy) -> None:
    fake.push(fixture_reply("openai_chat_1_parallel_tool_calls.json"), fixture_reply("openai_chat_2_final_answer.json"))
    model = model_for(fake, policy, send_null_content=True)
    messages = paris_question()
    first = await model.complete(messages, fixture_tools(TOOLS))
    assert fake.requests[0].path == "/v1/chat/completions"
    assert fake.requests[0].headers["authorization"] == f"Bearer {KEY}"
    expected = load_fixture("openai_chat_1_parallel_tool_calls.json")["request"]["body"]
    assert expected["tool_choice"] == "auto"  # sent explicitly: llama-cpp-python ignores tools without it
    assert fake.requests[0].body == expected
    assert [(c.id, c.name, c.arguments, c.parse_error) for c in first.message.tool_calls] == [
        ("call_Fake00000000000000000AA", "get_weather", {"city": "Paris"}, None),
        ("call_Fake00000000000000000BB", "get_local_time", {"city": "Paris"}, None),
    ]
    assert (first.usage.input_tokens, first.usage.output_tokens) == (118, 49)

    local_time = '{"city": "Paris", "local_time": "2026-12-02T09:41:00+01:00"}'
    messages += [
        first.message,
        weather_result("call_Fake00000000000000000AA"),
        local_time_result("call_Fake00000000000000000BB", local_time),
    ]
    final = await model.complete(messages, fixture_tools(TOOLS))
    # assistant echoed with its string arguments untouched, then one role:tool message per tool_call_id
    expected_final = load_fixture("openai_chat_2_final_answer.json")["request"]["body"]
    assert fake.requests[1].body == {**expected_final, "tool_choice": "auto"}
    assert final.message.tool_calls == [] and final.message.text.startswith("In Paris it is 14")
    assert (final.usage.input_tokens, final.usage.cache_read_tokens, final.usage.output_tokens) == (1262, 1024, 29)
    await model.aclose()


async def test_malformed_arguments_become_a_parse_error_not_a_crash(fake: FakeProvider, policy: RetryPolicy) -> None:
    broken = '{"city": "Par'
    fake.push(
        openai_completion(
            None, [openai_call("call_1", "get_weather", broken), openai_call("call_2", "get_local_time", "[1, 2]")]
        ),
        openai_completion("fine"),
    )
    model = model_for(fake, policy)
    reply = await model.complete(paris_question(), fixture_tools(TOOLS))
    bad, not_object = reply.message.tool_calls
    assert bad.raw_arguments == broken and bad.arguments == {}
    assert bad.parse_error is not None and "invalid JSON" in bad.parse_error
    assert not_object.parse_error is not None and "array" in not_object.parse_error
    # the loop answers such a call with the shared error text; the model then sees it and its own string again
    text = texts.unparseable_arguments(bad.name, bad.raw_arguments, bad.parse_error)
    history = [
        *paris_question(),
        reply.message,
        ToolResultMessage(call_id="call_1", name="get_weather", content=text, is_error=True),
        ToolResultMessage(call_id="call_2", name="get_local_time", content="x", is_error=True),
    ]
    await model.complete(history, fixture_tools(TOOLS))
    wire = fake.requests[1].body["messages"]
    assert wire[2]["tool_calls"][0]["function"]["arguments"] == broken
    assert wire[3] == {"role": "tool", "tool_call_id": "call_1", "content": text}
    await model.aclose()


async def test_local_server_quirks_object_args_missing_ids_and_stop_reason(
    fake: FakeProvider, policy: RetryPolicy
) -> None:
    """llama.cpp sends arguments as objects, some servers omit ids, some say 'stop' although tools were called."""
    fake.push(
        openai_completion(
            "",
            [
                openai_call(None, "get_weather", {"city": "Paris"}),
                openai_call(None, "get_local_time", {"city": "Paris"}),
            ],
            finish_reason="stop",
        ),
        openai_completion("done"),
    )
    model = model_for(fake, policy)
    reply = await model.complete(paris_question(), fixture_tools(TOOLS))
    calls = reply.message.tool_calls
    assert [c.arguments for c in calls] == [{"city": "Paris"}, {"city": "Paris"}]
    assert all(c.id.startswith("call_") for c in calls) and calls[0].id != calls[1].id
    results = [ToolResultMessage(call_id=c.id, name=c.name, content="ok") for c in calls]
    await model.complete([*paris_question(), reply.message, *results], fixture_tools(TOOLS))
    wire = fake.requests[1].body["messages"]
    assert [tc["id"] for tc in wire[2]["tool_calls"]] == [c.id for c in calls]
    assert [tc["function"]["arguments"] for tc in wire[2]["tool_calls"]] == ['{"city": "Paris"}'] * 2
    assert [m["tool_call_id"] for m in wire[3:]] == [c.id for c in calls]
    await model.aclose()


def refuses_null_content(request: RecordedRequest) -> Reply:
    """Like llama-cpp-python: an echoed assistant turn with content null is a request-validation error (a 500)."""
    if any(m.get("role") == "assistant" and m.get("content") is None for m in request.body["messages"]):
        return Reply(
            status=500,
            body={
                "error": {
                    "message": "content: none is not an allowed value",
                    "type": "server_error",
                    "param": None,
                    "code": None,
                }
            },
        )
    return openai_completion("answered")


async def test_content_null_refused_by_local_servers(policy: RetryPolicy, sleep: Any) -> None:
    with FakeProvider(responder=refuses_null_content) as fake:
        fake.push(openai_completion(None, [openai_call("call_1", "get_weather", '{"city": "Paris"}')]))
        local = model_for(fake, policy)  # a non-OpenAI base URL: "" is sent instead of null
        first = await local.complete(paris_question(), fixture_tools(TOOLS))
        history = [
            *paris_question(),
            first.message,
            ToolResultMessage(call_id="call_1", name="get_weather", content="rain"),
        ]
        assert (await local.complete(history, fixture_tools(TOOLS))).message.text == "answered"
        assert fake.requests[1].body["messages"][2]["content"] == ""

        strict = model_for(fake, RetryPolicy(max_tries=2, sleep=sleep), send_null_content=True)
        try:
            await strict.complete(history, fixture_tools(TOOLS))
        except ModelCallFailed as exc:
            assert exc.status == 500 and "content: none is not an allowed value" in exc.reason
        else:
            raise AssertionError("the fake refuses content null, so this call must fail")
        await local.aclose()
        await strict.aclose()


async def test_429_retry_after_then_500_then_success(fake: FakeProvider, sleep: Any, policy: RetryPolicy) -> None:
    fake.push(
        error_reply("openai", "429_rate_limit"),
        error_reply("openai", "500_server_error"),
        error_reply("openai", "503_overloaded"),
        openai_completion("ok"),
    )
    model = model_for(fake, policy)
    assert (await model.complete(paris_question(), [])).message.text == "ok"
    assert len(fake.requests) == 4
    assert sleep.waits[0] == 2.0  # the fixture's retry-after: 2
    assert 0 <= sleep.waits[1] <= 1.0 and 0 <= sleep.waits[2] <= 2.0  # full jitter under base*2**n
    await model.aclose()


async def test_insufficient_quota_is_not_retried(fake: FakeProvider, sleep: Any, policy: RetryPolicy) -> None:
    fake.push(error_reply("openai", "429_insufficient_quota_DO_NOT_RETRY"), openai_completion("never"))
    model = model_for(fake, policy)
    try:
        await model.complete(paris_question(), [])
    except ModelCallFailed as exc:
        assert (exc.status, exc.retryable, exc.attempts) == (429, False, 1)
        assert exc.reason.startswith("openai returned 429 insufficient_quota: You exceeded your current quota")
        assert "billing stop" in exc.reason
    else:
        raise AssertionError("insufficient_quota must fail")
    assert len(fake.requests) == 1 and sleep.waits == []
    await model.aclose()


async def test_bad_request_is_not_retried(fake: FakeProvider, sleep: Any, policy: RetryPolicy) -> None:
    fake.push(error_reply("openai", "400_bad_request"))
    model = model_for(fake, policy)
    try:
        await model.complete(paris_question(), [])
    except ModelCallFailed as exc:
        assert exc.status == 400 and not exc.retryable and "must be followed by tool messages" in exc.reason
    else:
        raise AssertionError("a 400 must fail")
    assert len(fake.requests) == 1 and sleep.waits == []
    await model.aclose()


async def test_tool_choice_is_auto_unless_set_and_a_tool_name_forces_it(
    fake: FakeProvider, policy: RetryPolicy
) -> None:
    forced = {"type": "function", "function": {"name": "get_weather"}}
    choices: list[str | None] = [None, "required", "none", "get_weather"]
    fake.push(*(openai_completion(str(i)) for i in range(len(choices))))
    for choice in choices:
        model = model_for(fake, policy, tool_choice=choice)
        await model.complete(paris_question(), fixture_tools(TOOLS))
        await model.aclose()
    assert [request.body["tool_choice"] for request in fake.requests] == ["auto", "required", "none", forced]


async def test_a_server_that_refuses_an_explicit_auto_is_asked_again_without_it_and_remembered(
    fake: FakeProvider, policy: RetryPolicy, sleep: Any
) -> None:
    """vLLM started without --enable-auto-tool-choice answers an explicit "auto" with this 400."""
    vllm = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
    refused = Reply(status=400, body={"object": "error", "message": vllm, "type": "BadRequestError", "code": 400})
    fake.push(refused, openai_completion("first"), openai_completion("second"))
    model = model_for(fake, policy)
    try:
        assert (await model.complete(paris_question(), fixture_tools(TOOLS))).message.text == "first"
        assert (await model.complete(paris_question(), fixture_tools(TOOLS))).message.text == "second"
    finally:
        await model.aclose()
        REFUSES_EXPLICIT_AUTO.discard(model.base_url)
    sent = [request.body.get("tool_choice") for request in fake.requests]
    assert sent == ["auto", None, None]  # one refusal, one retry without it, and not asked again
    assert sleep.waits == []  # a 400 is not waited on: the changed request is sent at once
