"""The conversation the provider fixtures in tests/fixtures/providers/ record, as toolwire messages: the question
about Paris, the two tools the request offered, and the weather tool's answer."""

from typing import Any

from toolwire_shared.messages import Message, SystemMessage, ToolResultMessage, UserMessage
from toolwire_shared.tools import ToolSpec

from .fake_providers import load_fixture

WEATHER = '{"city": "Paris", "temp_c": 14, "conditions": "light rain"}'


def paris_question() -> list[Message]:
    return [
        SystemMessage(content="You are a helpful assistant. Use tools when useful."),
        UserMessage(content="What is the weather in Paris right now, and what time is it there?"),
    ]


def fixture_tools(fixture: str) -> list[ToolSpec]:
    """The tools the fixture's request offered, from either wire shape (Anthropic, or OpenAI's `function`)."""

    def spec(tool: dict[str, Any]) -> ToolSpec:
        schema = tool["input_schema"] if "input_schema" in tool else tool["parameters"]
        return ToolSpec(name=tool["name"], description=tool["description"], input_schema=schema)

    return [spec(t.get("function", t)) for t in load_fixture(fixture)["request"]["body"]["tools"]]


def weather_result(call_id: str) -> ToolResultMessage:
    return ToolResultMessage(call_id=call_id, name="get_weather", content=WEATHER)


def local_time_result(call_id: str, content: str, *, is_error: bool = False) -> ToolResultMessage:
    return ToolResultMessage(call_id=call_id, name="get_local_time", content=content, is_error=is_error)
