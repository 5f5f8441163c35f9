"""`toolwire run --tool-search on` against the five servers nobody here wrote (52 tools): the model is first offered
only `search_tools` (and a kept tool); a search loads what it found, a tool called before it was loaded is loaded and
answered with its definition, and each tool then answers with its real result."""

import json
from pathlib import Path

from external.servers import git_repo, needs, npm_server, py_server, run_calls

TIME, GIT = py_server("mcp-server-time"), py_server("mcp-server-git")
MEMORY, EVERYTHING, FILESYSTEM = (npm_server(f"server-{name}") for name in ("memory", "everything", "filesystem"))


@needs(TIME + GIT + MEMORY + EVERYTHING + FILESYSTEM)
def test_search_then_call_on_the_five_reference_servers(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    files = tmp_path / "files"
    files.mkdir()
    servers = [TIME, GIT, MEMORY, [*EVERYTHING, "stdio"], [*FILESYSTEM, str(files)]]
    state, shown = run_calls(
        tmp_path,
        servers,
        ("search_tools", {"query": "current time in a timezone", "limit": 2}),
        ("get_current_time", {"timezone": "UTC"}),
        ("git_status", {"repo_path": str(repo)}),
        ("git_status", {"repo_path": str(repo)}),
        flags=(
            "--tool-search",
            "on",
            "--keep-tool",
            "echo",
            "--server-env",
            f"MEMORY_FILE_PATH={tmp_path / 'm.jsonl'}",
        ),
    )
    assert state["status"] == "done", shown
    found, now, early, status = (m["content"] for m in state["messages"] if m["role"] == "tool")
    assert "- get_current_time: Get current time in a specific timezone" in found, found
    assert json.loads(now)["timezone"] == "UTC"
    assert "was not loaded, so it did not run" in early and '"repo_path"' in early
    assert "staged.txt" in status
    assert [tool["name"] for tool in state["config"]["tools"]] == ["echo", "read_resource", "search_tools"]  # kept, own
    assert state["steps"][0]["loaded"][0] == "get_current_time" and state["steps"][2]["loaded"][-1] == "git_status"
