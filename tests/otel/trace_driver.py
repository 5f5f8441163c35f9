"""A tiny process that turns tracing on with configure_tracing, opens one run's spans, and ends as told.

argv: TRACE_OPTION ('-' for none) ENDING ('shutdown', 'exit', 'raise'). Used by test_setup.py.
"""

import sys
from types import SimpleNamespace

from toolwire_otel import spans
from toolwire_otel.setup import configure_tracing
from toolwire_shared.messages import ToolCall, UserMessage
from toolwire_shared.results import ToolResult
from toolwire_shared.usage import Usage


def main() -> None:
    option, ending = sys.argv[1], sys.argv[2]
    handle = configure_tracing(None if option == "-" else option)
    print(f"exporter={handle.exporter} enabled={handle.enabled}")
    with spans.agent_span("driver", "run_drv", "m-1") as agent:
        model = SimpleNamespace(provider="scripted", model="m-1", server_address=None, server_port=None)
        with spans.chat_span(model, "run_drv") as chat:
            spans.record_chat_content(chat, [UserMessage(content="look up A123")], [], None)
            spans.record_chat_response(chat, Usage(input_tokens=10, output_tokens=5), "m-1", "resp_1", "tool_calls")
        call = ToolCall(id="call_1", name="get_order", arguments={"order_id": "A123"})
        with spans.tool_span(call.name, call.id, "run_drv") as tool:
            result = ToolResult(call_id=call.id, name=call.name, content='{"item": "keyboard"}')
            spans.record_tool_result(tool, result)
            spans.record_tool_content(tool, call, result)
        if ending == "raise":
            raise RuntimeError("the driver failed on purpose")
        spans.record_run_end(agent, Usage(input_tokens=10, output_tokens=5), "done", "final answer")
    if ending == "exit":
        sys.exit(3)
    handle.shutdown()


if __name__ == "__main__":
    main()
