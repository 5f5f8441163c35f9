"""The `toolwire` command with the terminal tests' scripted model registered: `hostile_driver.py ARGS...`. The model
calls the hostile server's tools, a tool of its own invention whose name carries markup and escapes, and answers
with the same."""

import sys

from toolwire_client.models.seed_scripts import SCRIPTS, last_results
from toolwire_shared.messages import AssistantMessage, Message, ToolCall, UserMessage

ORDER_ID = "A123[x HIDDEN-1 also B999]"
"""Rich markup would show it as "A123": the approval binds the whole of it."""
GHOST = "ghost[x]\x1b[2J"
ANSWER = "done [bold red on red]HIDDEN[/]\x1b]52;c;aGk=\x07"


def hostile(messages: list[Message]) -> AssistantMessage:
    if last_results(messages):
        return AssistantMessage(text=ANSWER)
    task = next(m.content for m in messages if isinstance(m, UserMessage))
    if "confirm" in task:
        return AssistantMessage(tool_calls=[ToolCall(id="call_confirm", name="confirm", arguments={})])
    return AssistantMessage(
        tool_calls=[
            ToolCall(id="call_lookup", name="lookup", arguments={"order_id": ORDER_ID}),
            ToolCall(id="call_ghost", name=GHOST, arguments={}),
            ToolCall(id="call_refund", name="refund", arguments={"order_id": ORDER_ID}),
        ]
    )


SCRIPTS["hostile"] = hostile

if __name__ == "__main__":
    from toolwire_client.cli import main

    main(sys.argv[1:], prog_name="toolwire")
