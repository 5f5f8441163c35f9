"""`--model test`: your own tools run with no model and no key, as Pydantic AI's TestModel runs them.

The first turn calls every tool the run offers (or the ones named), all at once, so they run in parallel, each
with arguments made from its input schema (schema_data.py); the next turn answers with what came back, as JSON:
{"tool": result, ...}, a result that is JSON as its value, any other as its text. Unlike Pydantic AI, which sends a
call its validation refused again (with the same arguments), a tool's error is not retried: it is reported in the
answer as the error text the tool server gave, so a schema the arguments do not fit shows up there."""

import json
from typing import Any, Literal

from toolwire_client.models.base import ModelCallFailed
from toolwire_client.models.function_model import FunctionModel
from toolwire_client.models.schema_data import example_arguments
from toolwire_shared.messages import AssistantMessage, Message, ToolCall, ToolResultMessage
from toolwire_shared.tools import ToolSpec

NO_CALLS = "success (no tool calls)"
"""The answer when no tool was called (a run offered none): Pydantic AI's words."""


class TestModel(FunctionModel):
    """Implements Model: calls `call_tools` ("all", or a list of tool names) once, then answers with the results
    (or with `custom_output_text`). `seed` moves the generated arguments on (0: "a", 0, False, first enum value)."""

    __test__ = False  # not a pytest test class
    provider = "test"

    def __init__(
        self,
        *,
        call_tools: list[str] | Literal["all"] = "all",
        custom_output_text: str | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__(self._turn, name="test")
        self.call_tools = call_tools
        self.custom_output_text = custom_output_text
        self.seed = seed

    def _turn(self, messages: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        if not any(isinstance(m, AssistantMessage) for m in messages):
            calls = [
                ToolCall(
                    id=f"call_{spec.name}", name=spec.name, arguments=example_arguments(spec.input_schema, self.seed)
                )
                for spec in self._chosen(tools)
            ]
            if calls:
                return AssistantMessage(tool_calls=calls)
        if self.custom_output_text is not None:
            return AssistantMessage(text=self.custom_output_text)
        return AssistantMessage(text=answer(messages))

    def _chosen(self, tools: list[ToolSpec]) -> list[ToolSpec]:
        if self.call_tools == "all":
            return tools
        offered = {spec.name: spec for spec in tools}
        unknown = [name for name in self.call_tools if name not in offered]
        if unknown:
            listed = ", ".join(offered) or "none"
            raise ModelCallFailed(
                f"the test model was told to call {unknown[0]!r}, a tool this run does not offer (its tools: {listed})"
            )
        return [offered[name] for name in self.call_tools]


def answer(messages: list[Message]) -> str:
    """Every tool's last result as one JSON object, keyed by tool name (compact, as Pydantic AI writes it)."""
    results: dict[str, Any] = {}
    for message in messages:
        if isinstance(message, ToolResultMessage):
            results[message.name] = message.content if message.is_error else _value(message.content)
    if not results:
        return NO_CALLS
    return json.dumps(results, ensure_ascii=False, separators=(",", ":"))


def _value(content: str) -> Any:
    """A result's text as a value: JSON when it is JSON (MCP's {"result": x} wrapper of a plain value unwrapped)."""
    try:
        value = json.loads(content)
    except ValueError:
        return content
    return value["result"] if isinstance(value, dict) and set(value) == {"result"} else value
