"""The OpenAI Agents SDK's side of the peers bench, run in its own venv: the scripted 10-step run
(bench/peers/harness.py) on a minimal Model subclass returning canned Responses items (no network), with `echo` as a
plain `function_tool` and over one shared stdio MCP server (MCPServerStdio, connected once for all runs, tool list
cached like toolwire's and Pydantic AI's). Tracing is off: its default exporter would post to OpenAI."""

import contextlib
import json
import os
from collections.abc import AsyncIterator
from importlib import metadata
from typing import Any

import harness
from agents import Agent, Model, ModelResponse, RunConfig, Runner, Usage, function_tool, set_tracing_disabled
from agents.mcp import MCPServerStdio, MCPServerStdioParams
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

CURRENT: list[harness.Script] = [harness.Script()]  # the run in progress
RUN_CONFIG = RunConfig(tracing_disabled=True)


@function_tool
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


class CannedModel(Model):
    """Answers from the harness's script: one echo call per step, then the final text."""

    async def get_response(
        self,
        system_instructions: str | None,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> ModelResponse:
        script = CURRENT[0]
        if script.check:
            script.saw(str(input[-1]) if isinstance(input, list) and input else "")
        i = script.next()
        usage = Usage(requests=1, input_tokens=100, output_tokens=10, total_tokens=110)
        if i is None:
            text = ResponseOutputText(text=harness.FINAL, type="output_text", annotations=[], logprobs=[])
            item: Any = ResponseOutputMessage(
                id="m", type="message", role="assistant", status="completed", content=[text]
            )
        else:
            arguments = json.dumps({"text": harness.echo_text(i)})
            item = ResponseFunctionToolCall(
                id=f"c{i}", call_id=f"c{i}", type="function_call", name="echo", arguments=arguments
            )
        return ModelResponse(output=[item], usage=usage, response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the bench does not stream")


def runner(agent: Agent[Any]) -> harness.RunOnce:
    async def run_once(script: harness.Script) -> object:
        CURRENT[0] = script
        result = await Runner.run(agent, "bench", max_turns=harness.STEPS + 5, run_config=RUN_CONFIG)
        return result.final_output

    return run_once


@contextlib.asynccontextmanager
async def inproc(server: list[str]) -> AsyncIterator[harness.RunOnce]:
    yield runner(Agent(name="bench", model=CannedModel(), tools=[echo]))


@contextlib.asynccontextmanager
async def stdio(server: list[str]) -> AsyncIterator[harness.RunOnce]:
    params = MCPServerStdioParams(command=server[0], args=server[1:], cwd=os.getcwd())
    async with MCPServerStdio(params, cache_tools_list=True, client_session_timeout_seconds=60) as mcp:
        yield runner(Agent(name="bench", model=CannedModel(), mcp_servers=[mcp]))


if __name__ == "__main__":
    set_tracing_disabled(True)
    harness.main("OpenAI Agents SDK", metadata.version("openai-agents"), {"inproc": inproc, "stdio": stdio})
