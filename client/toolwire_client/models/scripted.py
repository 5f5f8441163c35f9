"""A model that is a plain function of the message list: tests and demos with no network and no key."""

import json
import time
from collections.abc import Callable

from toolwire_client.models.base import ModelReply
from toolwire_client.models.tokens import estimate_prompt, estimate_text
from toolwire_shared.messages import AssistantMessage, Message
from toolwire_shared.tools import ToolSpec
from toolwire_shared.usage import Usage

Script = Callable[[list[Message]], AssistantMessage]
UsageFn = Callable[[int, list[Message]], Usage]


class ScriptedModel:
    """Implements Model. Usage defaults to ~chars/4 of the prompt sent and the reply written."""

    provider = "scripted"
    server_address: str | None = None
    server_port: int | None = None

    def __init__(self, script: Script, *, name: str = "script", usage_fn: UsageFn | None = None):
        self.script = script
        self.model = name
        self.usage_fn = usage_fn
        self.calls = 0

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None = None
    ) -> ModelReply:
        started = time.perf_counter()
        turn = await self.next_turn(messages, tools)
        message = AssistantMessage(  # a copy, the script's own left as it is (a field by field replace() costs twice)
            text=turn.text, tool_calls=turn.tool_calls, provider=self.provider, provider_content=turn.provider_content
        )
        self.calls += 1
        usage = self.usage_fn(self.calls, messages) if self.usage_fn else self._estimate(messages, tools, message)
        return ModelReply(
            message=message,
            usage=usage,
            finish_reason="tool_calls" if message.tool_calls else "stop",
            response_model=self.model,
            latency_s=time.perf_counter() - started,
        )

    async def next_turn(self, messages: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        """The assistant's next turn: the script's (FunctionModel's turn function also sees the tools)."""
        return self.script(list(messages))

    @staticmethod
    def _estimate(messages: list[Message], tools: list[ToolSpec], reply: AssistantMessage) -> Usage:
        written = (
            reply.text + json.dumps([c.arguments for c in reply.tool_calls]) + "".join(c.name for c in reply.tool_calls)
        )
        return Usage(input_tokens=estimate_prompt(messages, tools), output_tokens=estimate_text(written))

    async def aclose(self) -> None:
        return None
