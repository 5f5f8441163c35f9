"""A model you write: a function of the messages and the tools that returns the next turn (Pydantic AI's
FunctionModel), and the turn as a script writes it, `{"calls": [{"name": "add", "args": {"a": 2}}]}` or
`{"text": "the answer"}`. No network and no key: tests of your own tools, and `--model script:FILE`."""

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from toolwire_client.models.scripted import ScriptedModel
from toolwire_shared.messages import AssistantMessage, Message, ToolCall
from toolwire_shared.tools import ToolSpec


class ScriptCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    """The tool, by the name the run offers it under."""
    args: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    """The call's id; by default one made from the turn and the call's place in it."""


class ScriptTurn(BaseModel):
    """One assistant turn as a script writes it: tool calls (run in parallel), text, or both."""

    model_config = ConfigDict(extra="forbid")

    calls: list[ScriptCall] = Field(default_factory=list)
    text: str = ""

    @model_validator(mode="after")
    def _something(self) -> "ScriptTurn":
        if not self.calls and not self.text:
            raise ValueError('a turn needs "calls" or "text"')
        return self


Turn = AssistantMessage | ScriptTurn | str | Mapping[str, Any]
"""What a turn function returns: an AssistantMessage, a final answer's text, or a script's turn (as a dict)."""
TurnFn = Callable[[list[Message], list[ToolSpec]], Turn | Awaitable[Turn]]
"""(messages so far, the tools offered) -> the next turn; a coroutine function is awaited."""
TURN_EXAMPLE = '{"calls": [{"name": "add", "args": {"a": 2, "b": 3}}]} or {"text": "the answer"}'


def assistant_turn(turn: Turn, messages: list[Message]) -> AssistantMessage:
    """`turn` as the assistant message the loop appends; a call without an id gets `call_TURN_I`."""
    if isinstance(turn, AssistantMessage):
        return turn
    if isinstance(turn, str):
        return AssistantMessage(text=turn)
    written = turn if isinstance(turn, ScriptTurn) else ScriptTurn.model_validate(turn)
    calls = [
        ToolCall(id=call.id or f"call_{len(messages)}_{i}", name=call.name, arguments=call.args)
        for i, call in enumerate(written.calls)
    ]
    return AssistantMessage(text=written.text, tool_calls=calls)


class FunctionModel(ScriptedModel):
    """Implements Model with `fn(messages, tools)`: each model call is one call of it (awaited when it is a
    coroutine function). Usage is estimated (~chars/4 of the prompt and the reply), as for the scripted models."""

    provider = "function"

    def __init__(self, fn: TurnFn, *, name: str | None = None) -> None:
        super().__init__(_never, name=name or str(getattr(fn, "__name__", "function")))
        self.fn = fn

    async def next_turn(self, messages: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        turn = self.fn(list(messages), list(tools))
        if inspect.isawaitable(turn):
            turn = await turn
        return assistant_turn(turn, messages)


def _never(messages: list[Message]) -> AssistantMessage:
    raise NotImplementedError("a FunctionModel's turns come from its function")
