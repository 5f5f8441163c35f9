"""Issue 33 §6: a tool server's log messages cannot fill the run's server log. A stdio server (log_flood_server.py)
logs 1,500 lines of 10,000 characters in one call (15 MB; one such call wrote 12.3 MB): the run's log file
(ServerOutput, as `toolwire run` writes it) holds what the server's budget allows (server_logs.py), its first lines
among them, and one line saying how many were dropped."""

import re
import sys
from pathlib import Path

import pytest

from toolwire_client.cli.server_output import LOG_DIR_ENV, ServerOutput
from toolwire_client.loop import Agent
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.server_logs import LOG_BURST_BYTES, MAX_LOG_LINE_CHARS
from toolwire_client.tools.server_stderr import ServerStderr
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import AssistantMessage, Message, ToolCall

SERVER = str(Path(__file__).with_name("log_flood_server.py"))
LINES, CHARS = 1_500, 10_000


def _flood_once(messages: list[Message]) -> AssistantMessage:
    if not any(isinstance(m, AssistantMessage) for m in messages):
        return AssistantMessage(
            tool_calls=[ToolCall(id="c0", name="flood", arguments={"lines": LINES, "chars": CHARS})]
        )
    return AssistantMessage(text="done")


async def test_a_flood_of_log_messages_is_capped_with_one_line_saying_how_many_were_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LOG_DIR_ENV, str(tmp_path))
    output = ServerOutput("flooded")
    source = McpSource("flood", command=[sys.executable, SERVER], stderr=ServerStderr("flood", output.line))
    state = await Agent(ScriptedModel(_flood_once), ToolBox([source])).run("flood the log")
    assert state.status == "done", state.stop_reason
    log = output.close()
    assert log is not None
    text = log.read_text()
    assert len(text) < LOG_BURST_BYTES + 2 * MAX_LOG_LINE_CHARS  # not 15 MB: the budget, and a line's slack
    written = re.findall(r"^flood \| \[info\] line (\d+) ", text, re.MULTILINE)
    assert written[:3] == ["0", "1", "2"]
    dropped = [int(n) for n in re.findall(r"^flood \| toolwire: dropped (\d+) log lines", text, re.MULTILINE)]
    assert dropped and sum(dropped) + len(written) == LINES  # every line written or counted
    assert re.search(r"^flood \| \[info\] line 0 x+ \.\.\. \(\d+ more characters not logged\)$", text, re.MULTILINE)
