"""The three wire formats as the tests read them: a scripted turn as each provider's reply, the model adapter that
talks to it, a run on such a script (`run_scripted`), and what a recorded request body sent (tool results by call
id, tool names, the system prompt)."""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from helpers.fake_providers import (
    FakeProvider,
    RecordedRequest,
    Reply,
    anthropic_message,
    openai_call,
    openai_completion,
    responses_call,
    responses_message,
    responses_reply,
)
from toolwire_client.loop import Agent
from toolwire_client.models.anthropic import AnthropicModel
from toolwire_client.models.base import Model
from toolwire_client.models.openai_chat import OpenAIChatModel
from toolwire_client.models.openai_responses import OpenAIResponsesModel
from toolwire_client.run.state import RunState
from toolwire_client.tools.toolbox import ToolBox

Call = tuple[str, str, dict[str, Any]]
"""(call id, tool name, arguments)."""


@dataclass(frozen=True)
class Wire:
    name: str
    spec: str
    """The provider-table prefix (`--model SPEC:NAME`)."""

    def model(self, fake: FakeProvider) -> Model:
        if self.name == "anthropic":
            return AnthropicModel("claude-fake", api_key="sk-ant-test", base_url=fake.anthropic_url)
        if self.name == "openai":
            return OpenAIChatModel("gpt-fake", api_key="sk-test", base_url=fake.openai_url)
        return OpenAIResponsesModel("gpt-fake", api_key="sk-test", base_url=fake.openai_url)

    def reply(self, text: str = "", calls: Sequence[Call] = (), input_tokens: int = 10) -> Reply:
        if self.name == "anthropic":
            usage = {"input_tokens": input_tokens, "output_tokens": 5}
            return anthropic_message(text, calls, usage=usage)  # type: ignore[arg-type]
        if self.name == "openai":
            wire = [openai_call(i, n, json.dumps(a)) for i, n, a in calls]
            usage = {"prompt_tokens": input_tokens, "completion_tokens": 5, "total_tokens": input_tokens + 5}
            return openai_completion(text or None, wire, usage=usage)
        items = ([responses_message(text)] if text else []) + [responses_call(i, n, json.dumps(a)) for i, n, a in calls]
        usage = {"input_tokens": input_tokens, "output_tokens": 5, "total_tokens": input_tokens + 5}
        return responses_reply(items, usage=usage)


ANTHROPIC = Wire("anthropic", "anthropic")
OPENAI = Wire("openai", "openai")
"""OpenAI Chat Completions."""
RESPONSES = Wire("responses", "openai-responses")
"""OpenAI Responses."""
WIRES = [ANTHROPIC, OPENAI, RESPONSES]


async def run_scripted(
    wire: Wire, box: ToolBox, task: str, replies: Sequence[Reply], risky_tools: set[str] | None = None
) -> tuple[RunState, list[RecordedRequest]]:
    """`task` run once on `box` by `wire`'s adapter, the loopback provider answering `replies` in turn: the run, and
    the requests the provider got."""
    with FakeProvider() as fake:
        fake.push(*replies)
        model = wire.model(fake)
        state = await Agent.of(model, box, risky_tools=risky_tools).run(task)
        await model.aclose()
    return state, fake.requests


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content or "")


def results_sent(body: dict[str, Any]) -> dict[str, str]:
    """Call id -> the tool result's text as the request carried it, in any of the three formats."""
    found: dict[str, str] = {}
    for message in body.get("messages", body.get("input", [])):
        if message.get("role") == "tool":
            found[message["tool_call_id"]] = _text(message["content"])
        elif message.get("type") == "function_call_output":
            found[message["call_id"]] = _text(message["output"])
        elif isinstance(message.get("content"), list):
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    found[block["tool_use_id"]] = _text(block.get("content"))
    return found


def tools_sent(body: dict[str, Any]) -> list[str]:
    return [tool.get("name") or tool["function"]["name"] for tool in body.get("tools", [])]


def system_sent(body: dict[str, Any]) -> str:
    """The system prompt (Anthropic's field, or a system/developer message or the Responses `instructions`)."""
    if "system" in body:
        return _text(body["system"])
    if body.get("instructions"):
        return str(body["instructions"])
    for message in body.get("messages", body.get("input", [])):
        if message.get("role") in ("system", "developer"):
            return _text(message.get("content"))
    return ""
