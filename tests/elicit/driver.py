"""The `toolwire` command with the elicitation tests' scripted model registered: `driver.py ARGS...`."""

import sys

from toolwire_client.models.seed_scripts import SCRIPTS, last_results
from toolwire_shared.messages import AssistantMessage, Message, ToolCall, UserMessage


def asks(messages: list[Message]) -> AssistantMessage:
    """Calls the tool the task names (`book_table` or `connect`), then answers with what came back."""
    results = last_results(messages)
    if results:
        return AssistantMessage(text=results[-1].content)
    task = next(m.content for m in messages if isinstance(m, UserMessage))
    call = (
        ToolCall(id="call_connect", name="connect", arguments={"service": "bank"})
        if "log in" in task
        else ToolCall(id="call_book", name="book_table", arguments={"restaurant": "Noma"})
    )
    return AssistantMessage(tool_calls=[call])


SCRIPTS["asks"] = asks

if __name__ == "__main__":
    from toolwire_client.cli import main

    main(sys.argv[1:], prog_name="toolwire")
