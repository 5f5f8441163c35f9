"""`toolwire` as a user runs it, with one scripted model more: `driver.py ARGS...` is `toolwire ARGS...`, where
`--model scripted:calls` reads its task as a JSON list of `[tool, arguments]` pairs, makes those calls one per step,
then answers with the JSON list of the texts that came back (so a test reads what the model read)."""

import json
import sys

from toolwire_client.models.seed_scripts import SCRIPTS
from toolwire_shared.messages import AssistantMessage, Message, ToolCall, ToolResultMessage, UserMessage


def calls(messages: list[Message]) -> AssistantMessage:
    """The next call of the task's list, or the answer once every call has come back."""
    planned = json.loads(next(m.content for m in messages if isinstance(m, UserMessage)))
    done = sum(isinstance(m, AssistantMessage) for m in messages)
    if done < len(planned):
        name, arguments = planned[done]
        return AssistantMessage(tool_calls=[ToolCall(id=f"call_{done}", name=name, arguments=arguments)])
    return AssistantMessage(text=json.dumps([m.content for m in messages if isinstance(m, ToolResultMessage)]))


SCRIPTS["calls"] = calls

if __name__ == "__main__":
    from toolwire_client.cli import main

    main(sys.argv[1:], prog_name="toolwire")
