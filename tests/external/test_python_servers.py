"""toolwire's client against the PyPI servers `mcp-server-time` and `mcp-server-git` (pinned in .ci/run, in a venv
of their own) in both protocol eras: they speak the 2026-07-28 era and the initialize handshake. (A user's
`toolwire run` against them: test_toolwire_run.py.)"""

from pathlib import Path
from typing import Literal

import pytest

from external.servers import git_repo, needs, py_server
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.source import RunContext
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import ToolCall

TIME = py_server("mcp-server-time")
GIT = py_server("mcp-server-git")
ERAS: list[tuple[Literal["auto", "legacy"], str]] = [("auto", "2026-07-28"), ("legacy", "2025-11-25")]
NOON_UTC_IN_TOKYO = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}


@needs(TIME)
@pytest.mark.parametrize(("mode", "era"), ERAS)
async def test_time_in_both_eras(mode: Literal["auto", "legacy"], era: str) -> None:
    source = McpSource("time", command=TIME, mode=mode)
    async with ToolBox([source]) as box:
        assert source.transport_info().protocol_version == era
        assert sorted(spec.name for spec in box.specs) == ["convert_time", "get_current_time"]
        [convert] = [spec for spec in box.specs if spec.name == "convert_time"]
        assert convert.output_schema and "$defs" in convert.output_schema
        result = await box.call(ToolCall(id="c1", name="convert_time", arguments=NOON_UTC_IN_TOKYO), RunContext("r"))
        wrong = await box.call(
            ToolCall(id="c2", name="get_current_time", arguments={"timezone": "Mars/Olympus"}), RunContext("r")
        )
    assert not result.is_error, result.content  # its structuredContent checked against the $defs/$ref schema
    assert result.structured and result.structured["time_difference"] == "+9.0h"
    assert result.structured["target"]["datetime"].endswith("T21:00:00+09:00")
    assert wrong.is_error and "Invalid timezone" in wrong.content, wrong.content


@needs(GIT)
@pytest.mark.parametrize(("mode", "era"), ERAS)
async def test_git_in_both_eras(tmp_path: Path, mode: Literal["auto", "legacy"], era: str) -> None:
    repo = git_repo(tmp_path / "repo")
    source = McpSource("git", command=GIT, mode=mode)
    async with ToolBox([source]) as box:
        assert source.transport_info().protocol_version == era
        status = await box.call(
            ToolCall(id="c1", name="git_status", arguments={"repo_path": str(repo)}), RunContext("r")
        )
        missing = await box.call(
            ToolCall(id="c2", name="git_status", arguments={"repo_path": str(tmp_path / "nowhere")}), RunContext("r")
        )
    assert not status.is_error and "staged.txt" in status.content
    assert missing.is_error and "nowhere" in missing.content, missing.content
