"""toolwire's side of the peers bench, run in toolwire's own venv exactly like the peers' scripts run in theirs: the
scripted 10-step run (bench/peers/harness.py) on a ScriptedModel with fixed usage (no token estimate, as in
bench/loop_bench.py), with `echo` in-process (a Registry behind a RegistrySource) and over one shared stdio MCP
server (an McpSource whose ToolBox is opened once for all runs)."""

import contextlib
from collections.abc import AsyncIterator
from importlib import metadata

import harness

from toolwire_client import Agent, McpSource, RegistrySource, RunLimits, ScriptedModel, ToolBox, ToolSource
from toolwire_server import Registry
from toolwire_shared.messages import AssistantMessage, Message, ToolCall, ToolResultMessage
from toolwire_shared.usage import Usage

CURRENT: list[harness.Script] = [harness.Script()]  # the run in progress
LIMITS = RunLimits(max_steps=harness.STEPS + 5)


async def echo(text: str) -> str:
    """Echo the text back."""
    return text


def respond(messages: list[Message]) -> AssistantMessage:
    script = CURRENT[0]
    if script.check:
        last = messages[-1]
        script.saw(last.content if isinstance(last, ToolResultMessage) else "")
    i = script.next()
    if i is None:
        return AssistantMessage(text=harness.FINAL)
    return AssistantMessage(tool_calls=[ToolCall(id=f"c{i}", name="echo", arguments={"text": harness.echo_text(i)})])


@contextlib.asynccontextmanager
async def variant(source: ToolSource) -> AsyncIterator[harness.RunOnce]:
    model = ScriptedModel(respond, usage_fn=lambda n, messages: Usage(input_tokens=100, output_tokens=10))
    async with ToolBox([source]) as box:  # for stdio: one server process and session for every run
        agent = Agent.of(model, box, limits=LIMITS)

        async def run_once(script: harness.Script) -> object:
            CURRENT[0] = script
            return (await agent.run("bench")).final_answer

        yield run_once


def inproc(server: list[str]) -> contextlib.AbstractAsyncContextManager[harness.RunOnce]:
    registry = Registry("bench-echo")
    registry.add(echo)
    return variant(RegistrySource(registry))


def stdio(server: list[str]) -> contextlib.AbstractAsyncContextManager[harness.RunOnce]:
    return variant(McpSource("bench-echo", command=server))


if __name__ == "__main__":
    harness.main("toolwire", metadata.version("toolwire"), {"inproc": inproc, "stdio": stdio})
