"""TestModel and FunctionModel in the API: arguments made from a schema as Pydantic AI's TestModel makes them, every
tool called once in one turn and the results as the answer, a function of the messages and tools as the model, and
`make_model()` with no key falling back to the test model. The tools are a real tool server over stdio."""

import json
import sys
from typing import Any

import pytest

from toolwire_client import Agent, FunctionModel, McpSource, TestModel, ToolBox, make_model
from toolwire_client.models.schema_data import example_arguments
from toolwire_shared.messages import AssistantMessage, Message, ToolResultMessage
from toolwire_shared.tools import ToolSpec

SUPPORT = [sys.executable, "-m", "toolwire_server", "examples.support_tools:registry", "--stdio"]

SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {"order_id": {"type": "string"}, "note": {"type": "string"}},
        "required": ["order_id"],
    },
    {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 3, "maximum": 9},
            "x": {"type": "number", "exclusiveMinimum": 0.5},
            "flag": {"type": "boolean"},
            "tone": {"enum": ["warm", "curt"]},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
            "when": {"type": "string", "format": "date"},
            "mail": {"type": "string", "format": "email"},
            "code": {"type": "string", "minLength": 3},
            "fixed": {"const": "v1"},
            "either": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "kinds": {"type": ["string", "integer"]},
        },
        "required": ["n", "x", "flag", "tone", "tags", "when", "mail", "code", "fixed", "either", "kinds"],
    },
    {
        "$defs": {
            "Item": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
                "required": ["sku", "qty"],
            }
        },
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
            "meta": {"type": "object", "additionalProperties": {"type": "integer"}},
        },
        "required": ["items", "meta"],
    },
    {
        "type": "object",
        "allOf": [
            {"properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"properties": {"b": {"type": "string"}}, "required": ["b"]},
        ],
    },
]


@pytest.mark.parametrize("seed", [0, 1, 7])
@pytest.mark.parametrize("schema", SCHEMAS, ids=["required-only", "every-type", "refs", "all-of"])
def test_arguments_are_those_pydantic_ais_test_model_makes(schema: dict[str, Any], seed: int) -> None:
    pydantic_ai_test = pytest.importorskip("pydantic_ai.models.test")
    expected = pydantic_ai_test._JsonSchemaTestData(schema, seed).generate()
    assert example_arguments(schema, seed) == expected


def test_arguments_fill_required_fields_only_with_the_smallest_values() -> None:
    assert example_arguments(SCHEMAS[0]) == {"order_id": "a"}  # `note` left out: the tool's default applies
    made = example_arguments(SCHEMAS[1])
    assert made == {
        "n": 3,
        "x": 1.5,
        "flag": False,
        "tone": "warm",
        "tags": ["a", "a"],
        "when": "2024-01-01",
        "mail": "user0@example.com",
        "code": "aaa",
        "fixed": "v1",
        "either": 0,
        "kinds": "a",
    }
    assert example_arguments(SCHEMAS[2]) == {"items": [{"sku": "a", "qty": 0}], "meta": {"additionalProperty": 0}}
    assert example_arguments({"type": "string"}) == {}  # not an object schema: no arguments


async def test_the_test_model_calls_every_tool_at_once_then_answers_with_the_results() -> None:
    model = TestModel(call_tools=["get_order", "search_orders", "calculator"])
    state = await Agent(model, ToolBox([McpSource("support", command=SUPPORT)])).run("Try the tools")
    assert state.status == "done", state.stop_reason
    first, last = [m for m in state.messages if isinstance(m, AssistantMessage)]
    assert [c.name for c in first.tool_calls] == [
        "get_order",
        "search_orders",
        "calculator",
    ]  # one turn: the calls run in parallel
    assert first.tool_calls[0].arguments == {"order_id": "a"}
    assert state.final_answer == last.text
    answer = json.loads(last.text)
    assert set(answer) == {"get_order", "search_orders", "calculator"}
    assert answer["calculator"].startswith("ERROR")
    assert "ERROR" in answer["get_order"] and "a" in answer["get_order"]  # no order "a": the error, reported
    assert answer["search_orders"] == []
    assert len(state.steps) == 2


async def test_the_test_model_says_so_when_told_to_call_a_tool_the_run_lacks() -> None:
    state = await Agent(
        TestModel(call_tools=["refund_everything"]), ToolBox([McpSource("support", command=SUPPORT)])
    ).run("x")
    assert state.status == "failed"
    assert "the test model was told to call 'refund_everything', a tool this run does not offer" in str(state.report)
    assert "get_order" in str(state.report)


async def test_a_function_model_is_a_function_of_the_messages_and_tools() -> None:
    seen: list[list[str]] = []

    async def agent(messages: list[Message], tools: list[ToolSpec]) -> dict[str, Any] | str:
        seen.append(sorted(tool.name for tool in tools))
        results = [m for m in messages if isinstance(m, ToolResultMessage)]
        if not results:
            return {"calls": [{"name": "get_order", "args": {"order_id": "A123"}}]}
        return f"The order holds {json.loads(results[0].content)['item']}."

    state = await Agent(FunctionModel(agent), ToolBox([McpSource("support", command=SUPPORT)])).run("What is A123?")
    assert (state.status, state.final_answer) == ("done", "The order holds keyboard.")
    assert "get_order" in seen[0] and len(seen) == 2


async def test_make_model_with_no_key_is_the_test_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    model = make_model()
    assert isinstance(model, TestModel) and model.call_tools == "all" and model.provider == "test"
    named = make_model("test:get_order,search_orders")
    assert isinstance(named, TestModel) and named.call_tools == ["get_order", "search_orders"]


async def test_scripted_reply_is_a_copy_of_every_field_the_script_wrote() -> None:
    """ScriptedModel copies the script's message field by field (cheaper than replace()): a field added to
    AssistantMessage must be copied there too, and the script's own message stays as it wrote it."""
    from dataclasses import fields

    from toolwire_client.models.scripted import ScriptedModel
    from toolwire_shared.messages import ToolCall

    assert {f.name for f in fields(AssistantMessage)} == {"role", "text", "tool_calls", "provider", "provider_content"}
    written = AssistantMessage(
        text="thinking", tool_calls=[ToolCall(id="c1", name="echo")], provider_content=[{"type": "thinking"}]
    )
    reply = await ScriptedModel(lambda messages: written).complete([], [])
    assert (reply.message.text, reply.message.tool_calls) == (written.text, written.tool_calls)
    assert (reply.message.provider, reply.message.provider_content) == ("scripted", written.provider_content)
    assert written.provider is None and reply.message is not written
