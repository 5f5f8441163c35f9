"""A user's `toolwire run` against all five servers nobody here wrote at once (`-v`, a scripted model that makes
the calls a model would): every tool answers with its real result (server-everything's task-only tool as a
2025-11-25 task, followed); server-everything's log message is shown inline; the filesystem server's `write_file`
(annotated `destructiveHint`) waits for a person's approval and has not written (approving and resuming:
tests/loop/test_annotations.py)."""

import json
import re
from pathlib import Path

from external.servers import ADA, EVERYTHING_LOG, git_repo, needs, npm_server, py_server, run_calls
from toolwire_client.calls import DESTRUCTIVE

TIME, GIT = py_server("mcp-server-time"), py_server("mcp-server-git")
MEMORY, EVERYTHING, FILESYSTEM = (npm_server(f"server-{name}") for name in ("memory", "everything", "filesystem"))
LOG_LINE = re.compile(r"^node-2 \| " + EVERYTHING_LOG, re.M)


@needs(TIME + GIT + MEMORY + EVERYTHING + FILESYSTEM)
def test_a_run_against_all_five_servers(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    files = tmp_path / "files"
    files.mkdir()
    (files / "note.txt").write_text("hello from disk\n")
    (tmp_path / "secret.txt").write_text("not yours\n")
    # named in the run by their program: mcp-server-time, mcp-server-git, node, node-2 (everything), node-3
    servers = [TIME, GIT, MEMORY, [*EVERYTHING, "stdio"], [*FILESYSTEM, str(files)]]
    memory_file = tmp_path / "memory.jsonl"
    state, shown = run_calls(
        tmp_path,
        servers,
        ("get_current_time", {"timezone": "UTC"}),
        ("git_status", {"repo_path": str(repo)}),
        ("create_entities", {"entities": [ADA]}),
        ("read_graph", {}),
        ("toggle-simulated-logging", {}),
        ("echo", {"message": "hello, everything"}),
        ("toggle-simulated-logging", {}),  # off again: its timer would keep the server from ending with stdin
        ("simulate-research-query", {"topic": "tides"}),
        ("read_text_file", {"path": str(files / "note.txt")}),
        ("read_text_file", {"path": str(tmp_path / "secret.txt")}),
        ("write_file", {"path": str(files / "new.txt"), "content": "written by the agent"}),
        flags=("-v", "--server-env", f"MEMORY_FILE_PATH={memory_file}"),
    )
    assert state["status"] == "waiting_for_approval", shown
    results = [m for m in state["messages"] if m["role"] == "tool"]
    now, status, created, graph, toggled, echoed, untoggled, task_only, note, outside = (m["content"] for m in results)
    assert json.loads(now)["timezone"] == "UTC"
    assert "new file:   staged.txt" in status and "loose.txt" in status, status
    assert json.loads(created) == [ADA] and json.loads(graph) == {"entities": [ADA], "relations": []}
    assert toggled.startswith("Started simulated") and untoggled.startswith("Stopped simulated")
    assert echoed == "Echo: hello, everything"
    assert task_only.startswith("# Research Report: tides"), task_only  # a 2025-11-25 task, followed
    assert note == "hello from disk\n"
    assert outside.startswith("Access denied - path outside allowed directories"), outside
    assert [m["is_error"] for m in results] == [False] * 9 + [True]

    assert LOG_LINE.search(shown), shown  # the server's log message, under -v
    offered = {tool["name"] for tool in state["config"]["tools"]}
    assert {"get_current_time", "git_status", "read_graph", "echo", "write_file", "simulate-research-query"} <= offered

    [waiting] = state["pending"]
    assert waiting["call"]["name"] == "write_file" and waiting["approval_reason"] == DESTRUCTIVE
    assert not (files / "new.txt").exists()
