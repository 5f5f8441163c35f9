"""Pydantic AI's side of the peers bench, run in its own venv: the scripted 10-step run (bench/peers/harness.py) on a
FunctionModel, with `echo` as a plain async function tool and over one shared stdio MCP server (MCPToolset on a
FastMCP StdioTransport, entered once for all runs). Usage is given with each reply so no token estimate runs."""

import contextlib
import os
from collections.abc import AsyncIterator
from importlib import metadata

import harness
from fastmcp.client import Client
from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

USAGE = RequestUsage(input_tokens=100, output_tokens=10)
CURRENT: list[harness.Script] = [harness.Script()]  # the run in progress (FunctionModel gets no deps)


async def echo(text: str) -> str:
    """Echo the text back."""
    return text


def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    script = CURRENT[0]
    if script.check:
        returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        script.saw(str(returns[-1].content) if returns else "")
    i = script.next()
    if i is None:
        return ModelResponse(parts=[TextPart(harness.FINAL)], usage=USAGE)
    call = ToolCallPart(tool_name="echo", args={"text": harness.echo_text(i)}, tool_call_id=f"c{i}")
    return ModelResponse(parts=[call], usage=USAGE)


def runner(agent: Agent[None, str]) -> harness.RunOnce:
    async def run_once(script: harness.Script) -> object:
        CURRENT[0] = script
        return (await agent.run("bench")).output

    return run_once


@contextlib.asynccontextmanager
async def inproc(server: list[str]) -> AsyncIterator[harness.RunOnce]:
    yield runner(Agent(FunctionModel(respond), tools=[echo]))


@contextlib.asynccontextmanager
async def stdio(server: list[str]) -> AsyncIterator[harness.RunOnce]:
    toolset = MCPToolset(Client(StdioTransport(server[0], server[1:], cwd=os.getcwd())))
    agent = Agent(FunctionModel(respond), toolsets=[toolset])
    async with agent:  # one server process and session for every run
        yield runner(agent)


if __name__ == "__main__":
    harness.main("Pydantic AI", metadata.version("pydantic-ai-slim"), {"inproc": inproc, "stdio": stdio})
