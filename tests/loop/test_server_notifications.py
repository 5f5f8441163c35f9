"""What another MCP server sends unasked reaches the person or the model (issue 23), on a real stdio server of the
tests' own (notifying_server.py), in both protocol eras: its log messages go to the run's server log; a tool it
adds at run time (`list_changed`) is offered on the next step, and replay offers the same tools per step; its
`instructions` are joined to the first request's system prompt, saved with the run."""

import sys
from pathlib import Path
from typing import Literal

import pytest

from toolwire_client.config import RunConfig
from toolwire_client.loop import Agent
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.replay import replay
from toolwire_client.store.sqlite import SqliteRunStore
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.server_stderr import ServerStderr
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolResultMessage
from toolwire_shared.tools import ToolSpec

REPO = Path(__file__).resolve().parents[2]
SERVER = str(REPO / "tests" / "loop" / "notifying_server.py")
Mode = Literal["auto", "legacy"]
MODES: list[Mode] = ["auto", "legacy"]  # auto: the 2026-07-28 era (the SDK's server speaks it); legacy: a session


class Recorder:
    """A scripted model that calls `calls` in turn, one per step, then answers; it keeps what each request sent."""

    def __init__(self, *calls: str):
        self.calls = list(calls)
        self.requests: list[tuple[list[Message], list[str]]] = []
        self.model = ScriptedModel(self._script)
        inner = self.model.complete

        async def complete(messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None = None):  # type: ignore[no-untyped-def]
            self.requests.append((list(messages), [t.name for t in tools]))
            return await inner(messages, tools, max_output_tokens)

        self.model.complete = complete  # type: ignore[method-assign]

    def _script(self, messages: list[Message]) -> AssistantMessage:
        done = sum(1 for m in messages if isinstance(m, AssistantMessage))
        if done < len(self.calls):
            return AssistantMessage(tool_calls=[ToolCall(id=f"c{done}", name=self.calls[done], arguments={})])
        last = messages[-1]
        return AssistantMessage(text=f"got: {last.content if isinstance(last, ToolResultMessage) else ''}")


def source(mode: Mode, lines: list[tuple[str, str]] | None = None, instructions: bool = True) -> McpSource:
    kept: list[tuple[str, str]] = [] if lines is None else lines
    stderr = ServerStderr("notifying", lambda server, line: kept.append((server, line)))
    return McpSource(
        "notifying", command=[sys.executable, SERVER], stderr=stderr, mode=mode, use_instructions=instructions
    )


@pytest.mark.parametrize("mode", MODES)
async def test_a_server_log_message_goes_to_the_run_s_server_log(mode: Mode) -> None:
    lines: list[tuple[str, str]] = []
    recorder = Recorder("hello")
    state = await Agent(recorder.model, ToolBox([source(mode, lines)])).run("say hello")
    assert state.status == "done", state.stop_reason
    assert ("notifying", "[info] hello was called") in lines


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_added_at_run_time_is_callable_on_the_next_step_and_replays(mode: Mode, tmp_path: Path) -> None:
    recorder = Recorder("add_late_tool", "late_tool")
    store = await SqliteRunStore(tmp_path / "runs.sqlite3").open()
    try:
        config = RunConfig(model="scripted:notify")
        state = await Agent(recorder.model, ToolBox([source(mode)]), config=config, store=store).run("add, then use")
        assert state.status == "done", state.stop_reason
        assert state.final_answer == "got: late and working"
        offered = [tools for _, tools in recorder.requests]
        assert "late_tool" not in offered[0] and "late_tool" in offered[1]
        recorded = await store.load(state.run_id)
    finally:
        await store.aclose()
    assert [t.name for t in RunConfig.model_validate(recorded.config).tools] == ["hello", "add_late_tool"]
    assert recorded.steps[0].tools is None
    assert [t.name for t in recorded.steps[1].tools or []] == ["hello", "add_late_tool", "late_tool"]

    outcome = await replay(recorded)
    assert outcome.identical, outcome.difference
    assert [[t.name for t in s.tools] if s.tools else None for s in outcome.replayed.steps] == [
        None,
        ["hello", "add_late_tool", "late_tool"],
        None,
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_the_server_s_instructions_reach_the_first_request_s_system_prompt(mode: Mode, tmp_path: Path) -> None:
    recorder = Recorder()
    config = RunConfig(model="scripted:notify", system="You are terse.")
    store = await SqliteRunStore(tmp_path / "runs.sqlite3").open()
    try:
        state = await Agent(recorder.model, ToolBox([source(mode)]), config=config, store=store).run("hi")
        recorded = await store.load(state.run_id)
    finally:
        await store.aclose()
    first = recorder.requests[0][0][0]
    assert isinstance(first, SystemMessage)
    assert first.content == (
        "You are terse.\n\nInstructions from the tool server 'notifying':\nAlways greet the user by name: Ada."
    )
    assert recorded.messages[0] == first  # saved: a resume sends the same prompt
    outcome = await replay(recorded)
    assert outcome.identical, outcome.difference
    assert outcome.replayed.messages[0] == first


async def test_instructions_can_be_turned_off() -> None:
    recorder = Recorder()
    await Agent(recorder.model, ToolBox([source("auto", instructions=False)])).run("hi")
    assert not any(isinstance(m, SystemMessage) for m in recorder.requests[0][0])
