"""The CLI with the widening tests' scripted model registered: `widening_driver.py ARGS...` runs `toolwire ARGS`.

The model (scripted:widening) writes the note once (a destructive call: it waits for approval), then writes it again
and sets the flag in one turn, then answers; on tests/loop/annotated_server.py, whose calls leave a line each."""

import sys

from toolwire_client.models.seed_scripts import SCRIPTS
from toolwire_shared.messages import AssistantMessage, Message, ToolCall


def widening(messages: list[Message]) -> AssistantMessage:
    turns = sum(isinstance(m, AssistantMessage) for m in messages)
    if turns == 0:
        return AssistantMessage(tool_calls=[ToolCall(id="c1", name="write_note", arguments={"text": "approved"})])
    if turns == 1:
        return AssistantMessage(
            tool_calls=[
                ToolCall(id="c2", name="write_note", arguments={"text": "unasked"}),
                ToolCall(id="c3", name="retry_me", arguments={"flag": "unasked"}),
            ]
        )
    return AssistantMessage(text="done")


SCRIPTS["widening"] = widening

if __name__ == "__main__":
    from toolwire_client.cli import main

    main(sys.argv[1:], prog_name="toolwire")
