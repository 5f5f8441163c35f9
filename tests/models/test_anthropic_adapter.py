"""The Anthropic adapter against a loopback server speaking the Messages API, fed from the provider fixtures."""

import copy
from typing import Any

from helpers.fake_providers import FakeProvider, Reply, anthropic_message, fixture_reply, load_fixture
from helpers.fixture_chat import fixture_tools, local_time_result, paris_question, weather_result
from toolwire_client.models.anthropic import AnthropicModel
from toolwire_client.models.retry import RetryPolicy
from toolwire_shared import AssistantMessage, Message, SystemMessage, ToolCall, ToolResultMessage, UserMessage
from toolwire_shared.messages import dump_messages, load_messages

KEY = "sk-ant-test"
TOOLS = "anthropic_1_parallel_tool_use.json"
EPHEMERAL = {"type": "ephemeral"}
QUESTION = "What is the weather in Paris right now, and what time is it there?"
THINKING = {"type": "thinking", "thinking": "Two independent lookups; call both.", "signature": "EqQBCkYIARgCKkA+sig=="}


def model_for(fake: FakeProvider, policy: RetryPolicy, **kw: Any) -> AnthropicModel:
    return AnthropicModel(
        "claude-sonnet-4-5", api_key=KEY, base_url=fake.anthropic_url, max_tokens=1024, retry=policy, **kw
    )


async def test_two_parallel_calls_then_final_answer(fake: FakeProvider, policy: RetryPolicy) -> None:
    step1 = fixture_reply("anthropic_1_parallel_tool_use.json")
    step1.body["content"].insert(0, THINKING)  # thinking on: the block and its signature must come back unchanged
    fake.push(step1, fixture_reply("anthropic_2_final_answer.json"))
    model = model_for(fake, policy)
    tools = fixture_tools(TOOLS)
    messages = paris_question()

    first = await model.complete(messages, tools)
    assert [(c.id, c.name, c.arguments) for c in first.message.tool_calls] == [
        ("toolu_01WxYz0000000000000000AA", "get_weather", {"city": "Paris"}),
        ("toolu_01WxYz0000000000000000BB", "get_local_time", {"city": "Paris"}),
    ]
    assert first.message.text == "I'll look up the weather and the local time in Paris."
    assert first.finish_reason == "tool_use"
    assert first.usage.input_tokens == 412 and first.usage.output_tokens == 96

    sent = fake.requests[0]
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == KEY and sent.headers["anthropic-version"] == "2026-10-21"
    expected = load_fixture("anthropic_1_parallel_tool_use.json")["request"]["body"]
    expected["tools"][-1]["cache_control"] = EPHEMERAL  # breakpoints: tools, system (in the fixture), the prompt
    expected["messages"][0]["content"] = [{"type": "text", "text": QUESTION, "cache_control": EPHEMERAL}]
    assert sent.body == expected

    failed = "MCP tool get_local_time failed: upstream timeout after 10s"
    messages += [
        first.message,
        weather_result("toolu_01WxYz0000000000000000AA"),
        local_time_result("toolu_01WxYz0000000000000000BB", failed, is_error=True),
    ]
    messages = load_messages(dump_messages(messages))  # what a saved and resumed run sends: must be the same

    final = await model.complete(messages, tools)
    assert final.message.tool_calls == [] and final.finish_reason == "end_turn"
    assert final.message.text.startswith("In Paris it is 14")
    assert (final.usage.input_tokens, final.usage.cache_read_tokens, final.usage.cache_write_tokens) == (558, 520, 0)

    wire = fake.requests[1].body["messages"]
    assert [m["role"] for m in wire] == ["user", "assistant", "user"]
    assert wire[1]["content"] == step1.body["content"]  # echoed verbatim, thinking block and signature included
    expected_results = load_fixture("anthropic_2b_tool_error_variant.json")["request"]["body"]["messages"][2]
    expected_results["content"][-1]["cache_control"] = EPHEMERAL  # read up to the prompt, written up to here
    assert wire[2] == expected_results  # ONE user message, both tool_result blocks, is_error mapped
    assert wire[0]["content"][-1]["cache_control"] == EPHEMERAL
    for field in ("temperature", "top_p", "top_k"):
        assert field not in fake.requests[1].body
    await model.aclose()


async def test_assistant_turn_from_another_provider_is_rebuilt(fake: FakeProvider, policy: RetryPolicy) -> None:
    fake.push(anthropic_message("done"))
    model = model_for(fake, policy, prompt_cache="off")  # the wire as rebuilt, without breakpoints
    turn = AssistantMessage(
        text="Checking.",
        provider="openai",
        tool_calls=[
            ToolCall(id="call_1", name="get_weather", arguments={"city": "Oslo"}, raw_arguments='{"city":"Oslo"}')
        ],
    )
    messages: list[Message] = [
        UserMessage(content="weather?"),
        turn,
        ToolResultMessage(call_id="call_1", name="get_weather", content="cold"),
        UserMessage(content="Answer in one word."),
    ]
    await model.complete(messages, fixture_tools(TOOLS))
    wire = fake.requests[0].body["messages"]
    assert wire[1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Oslo"}},
        ],
    }
    # the user's text joins the results' message, after them, instead of making a second user turn
    assert wire[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": "cold"},
            {"type": "text", "text": "Answer in one word."},
        ],
    }
    assert len(wire) == 3
    await model.aclose()


async def test_version_setting_and_null_usage_fields(fake: FakeProvider, policy: RetryPolicy) -> None:
    fake.push(
        anthropic_message(
            "hi",
            usage={
                "input_tokens": 7,
                "cache_creation_input_tokens": None,
                "cache_read_input_tokens": None,
                "output_tokens": 3,
            },
        )
    )
    model = model_for(fake, policy, version="2023-06-01", prompt_cache="off")
    reply = await model.complete([SystemMessage(content="be brief"), UserMessage(content="hi")], [])
    assert fake.requests[0].headers["anthropic-version"] == "2023-06-01"
    assert fake.requests[0].body["system"] == [{"type": "text", "text": "be brief"}]
    assert "tools" not in fake.requests[0].body
    assert (reply.usage.input_tokens, reply.usage.cache_read_tokens, reply.usage.output_tokens) == (7, 0, 3)
    await model.aclose()


async def test_529_then_success_retries_with_jittered_backoff(fake: FakeProvider, sleep: Any) -> None:
    from helpers.fake_providers import error_reply

    fake.push(
        error_reply("anthropic", "529_overloaded"),
        error_reply("anthropic", "500_api_error"),
        anthropic_message("recovered"),
    )
    model = model_for(fake, RetryPolicy(max_tries=4, base_s=0.5, cap_s=8.0, sleep=sleep))
    reply = await model.complete([UserMessage(content="hi")], [])
    assert reply.message.text == "recovered"
    assert len(fake.requests) == 3 and reply.attempts == 3
    assert len(sleep.waits) == 2 and 0 <= sleep.waits[0] <= 0.5 and 0 <= sleep.waits[1] <= 1.0
    await model.aclose()


async def test_429_honours_retry_after(fake: FakeProvider, sleep: Any, policy: RetryPolicy) -> None:
    from helpers.fake_providers import error_reply

    fake.push(error_reply("anthropic", "429_rate_limit"), anthropic_message("ok"))
    model = model_for(fake, policy)
    assert (await model.complete([UserMessage(content="hi")], [])).message.text == "ok"
    assert sleep.waits == [7.0]  # the fixture's retry-after: 7
    await model.aclose()


async def test_spend_limit_429_is_a_billing_stop(fake: FakeProvider, sleep: Any, policy: RetryPolicy) -> None:
    from toolwire_client.models.base import ModelCallFailed

    body = {
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "message": "Spend limit reached.",
            "details": {"error_code": "enforced_spend_limit_reached"},
        },
    }
    fake.push(Reply(status=429, body=body), anthropic_message("never sent"))
    model = model_for(fake, policy)
    try:
        await model.complete([UserMessage(content="hi")], [])
    except ModelCallFailed as exc:
        assert not exc.retryable and exc.status == 429 and exc.attempts == 1
        assert "enforced_spend_limit_reached" in exc.reason and "billing stop" in exc.reason
    else:
        raise AssertionError("a spend-limit 429 must fail")
    assert len(fake.requests) == 1 and sleep.waits == []
    await model.aclose()


async def test_thinking_echo_survives_copying(fake: FakeProvider, policy: RetryPolicy) -> None:
    """The echo is the stored provider_content itself, not a re-serialisation that could reorder or drop keys."""
    blocks: list[dict[str, Any]] = [
        copy.deepcopy(THINKING),
        {"type": "redacted_thinking", "data": "EmwKAhgB"},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"q": "x"}},
    ]
    fake.push(anthropic_message("", extra_blocks=blocks), anthropic_message("done"))
    model = model_for(fake, policy)
    first = await model.complete([UserMessage(content="hi")], [])
    await model.complete([UserMessage(content="hi"), first.message, UserMessage(content="go on")], [])
    assert fake.requests[1].body["messages"][1]["content"] == blocks
    await model.aclose()
