"""A two-parallel-calls run end to end: provider adapters over loopback HTTP (real wire formats), the real support
tool server over stdio, and the loop in between."""

import json

from helpers.fake_providers import FakeProvider, anthropic_message, openai_call, openai_completion
from toolwire_client.loop import Agent
from toolwire_client.models.anthropic import AnthropicModel
from toolwire_client.models.openai_chat import OpenAIChatModel
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.toolbox import ToolBox

TASK = "Check order A123 and the customer's other orders."


async def test_openai_two_parallel_calls_then_final(support_source: McpSource) -> None:
    with FakeProvider() as fake:
        fake.push(
            openai_completion(
                None,
                [
                    openai_call("call_a", "get_order", '{"order_id": "A123"}'),
                    openai_call("call_b", "search_orders", '{"customer_id": "cus_8123"}'),
                ],
            ),
            openai_completion("A123 is a delivered keyboard; the customer has 3 orders."),
        )
        model = OpenAIChatModel("gpt-fake", api_key="sk-test", base_url=fake.openai_url)
        state = await Agent(model, ToolBox([support_source])).run(TASK)
        await model.aclose()
    assert state.status == "done" and state.final_answer is not None and "3 orders" in state.final_answer
    sent = fake.requests[1].body["messages"]
    tool_msgs = [m for m in sent if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["call_a", "call_b"]
    assert json.loads(tool_msgs[0]["content"])["item"] == "keyboard"
    assert len(json.loads(tool_msgs[1]["content"])) == 3
    assert {t["function"]["name"] for t in fake.requests[0].body["tools"]} >= {"get_order", "issue_refund"}


async def test_anthropic_two_parallel_calls_then_final(support_source: McpSource) -> None:
    with FakeProvider() as fake:
        fake.push(
            anthropic_message(
                "Looking both up.",
                [
                    ("toolu_a", "get_order", {"order_id": "A123"}),
                    ("toolu_b", "search_orders", {"customer_id": "cus_8123"}),
                ],
            ),
            anthropic_message("A123 is a delivered keyboard."),
        )
        model = AnthropicModel("claude-fake", api_key="sk-ant-test", base_url=fake.anthropic_url)
        state = await Agent(model, ToolBox([support_source])).run(TASK)
        await model.aclose()
    assert state.status == "done" and state.final_answer == "A123 is a delivered keyboard."
    last_user = fake.requests[1].body["messages"][-1]
    assert last_user["role"] == "user"
    blocks = last_user["content"]
    assert [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"] == ["toolu_a", "toolu_b"]
    assert blocks[0]["type"] == "tool_result" and state.usage.total_tokens == 30
