"""An agent run that says where its tool calls went: toolwire's loop with a scripted model that calls the fixture
tool `whoami` (tests/server/replica_tools.py) a number of times over an HTTP McpSource, in either protocol era."""

from typing import Literal

from toolwire_client.loop import Agent
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import AssistantMessage, Message, ToolCall, ToolResultMessage

REPLICA_TOOLS = "tests/server/replica_tools.py:registry"


def asks_whoami(times: int) -> ScriptedModel:
    """Calls `whoami` once per turn, `times` turns, then answers."""

    def script(messages: list[Message]) -> AssistantMessage:
        done = sum(isinstance(m, AssistantMessage) for m in messages)
        if done < times:
            return AssistantMessage(tool_calls=[ToolCall(id=f"who{done}", name="whoami", arguments={"turn": done})])
        return AssistantMessage(text="done")

    return ScriptedModel(script)


async def whoami_run(url: str, *, token: str, mode: Literal["auto", "legacy"], times: int) -> list[str]:
    """One agent run through `url`: the `NAME:PID` answer of each of its calls, in order. Asserts the run ended
    well and every call succeeded."""
    source = McpSource("replicas", url=url, token=token, mode=mode)
    state = await Agent(asks_whoami(times), ToolBox([source])).run("Which replicas answer?")
    results = [m for m in state.messages if isinstance(m, ToolResultMessage)]
    failed = [m.content for m in results if m.is_error]
    assert state.status == "done" and not failed and len(results) == times, (state.status, failed, len(results))
    return [m.content for m in results]
