"""The agent process of the two-process tests: tracing from the OTEL_* variables, a scripted run that asks for two
tool calls at once against the real tool server (stdio command or HTTP URL), then a final answer.

argv: 'stdio' SERVER_ARGV... | 'http' URL. Prints the RunState summary as one JSON line.
"""

import json
import sys

import anyio

from toolwire_client.loop import Agent
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_otel.setup import child_process_env, configure_tracing
from toolwire_shared.messages import AssistantMessage, Message, ToolCall, ToolResultMessage


def script(messages: list[Message]) -> AssistantMessage:
    results = [m for m in messages if isinstance(m, ToolResultMessage)]
    if not results:
        return AssistantMessage(
            tool_calls=[
                ToolCall(id="call_order", name="get_order", arguments={"order_id": "A123"}),
                ToolCall(id="call_calc", name="calculator", arguments={"expression": "2500 * 2 * 1.18"}),
            ]
        )
    total = next(r.content for r in results if r.name == "calculator")
    return AssistantMessage(text=f"Order A123 costs {total} rupees with 18% GST.")


async def main(argv: list[str]) -> None:
    handle = configure_tracing()
    try:
        if argv[0] == "stdio":
            source = McpSource("support", command=argv[1:], env=child_process_env(), cwd=".")
        else:
            source = McpSource("support", url=argv[1])
        state = await Agent.of(ScriptedModel(script, name="gpt-4o-mini"), ToolBox([source]), name="support-agent").run(
            "What does order A123 cost with GST?"
        )
        print(
            json.dumps(
                {
                    "status": state.status,
                    "trace_id": state.trace_id,
                    "answer": state.final_answer,
                    "run_id": state.run_id,
                    "report": state.report,
                    "usage": [[s.usage.input_tokens, s.usage.output_tokens] for s in state.steps],
                }
            )
        )
    finally:
        handle.shutdown()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
