"""toolwire's client against the npm servers `server-memory`, `server-filesystem` and `server-everything` (pinned in
.ci/run, run with node22's Node): real results, the filesystem server's own refusal of a path outside its folder,
server-everything's structured content, log messages (over stdio and Streamable HTTP) and its task-only tool, not
offered with a note where the server's output goes: those servers speak the initialize handshake only (their SDK
predates the 2026-07-28 era, so no tasks extension). (A user's `toolwire run`, and the approval a destructive
filesystem tool waits for: test_toolwire_run.py.)"""

import json
import re
from pathlib import Path

from external.servers import ADA, EVERYTHING_LOG, EverythingHttp, needs, npm_server
from helpers.polling import await_until
from toolwire_client import texts
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.server_stderr import ServerStderr
from toolwire_client.tools.source import RunContext
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import ToolCall
from toolwire_shared.results import ToolResult

MEMORY = npm_server("server-memory")
FILESYSTEM = npm_server("server-filesystem")
EVERYTHING = npm_server("server-everything")
LOG_LINE = re.compile("^" + EVERYTHING_LOG)
TASK_ONLY = "simulate-research-query"


class Lines:
    """What a source writes where the server's output goes (its stderr, log messages, toolwire's notes)."""

    def __init__(self, name: str) -> None:
        self.lines: list[str] = []
        self.stderr = ServerStderr(name, lambda server, line: self.lines.append(line))

    def logged(self) -> list[str]:
        return [line for line in self.lines if LOG_LINE.match(line)]


async def call(box: ToolBox, name: str, **arguments: object) -> ToolResult:
    return await box.call(ToolCall(id=f"call_{name}", name=name, arguments=arguments), RunContext("run_external"))


@needs(MEMORY)
async def test_memory_keeps_an_entity_and_reads_it_back(tmp_path: Path) -> None:
    memory_file = tmp_path / "memory.jsonl"
    source = McpSource("memory", command=MEMORY, env={"MEMORY_FILE_PATH": str(memory_file)})
    async with ToolBox([source]) as box:
        created = await call(box, "create_entities", entities=[ADA])
        graph = await call(box, "read_graph")
    assert not created.is_error and created.structured == {"entities": [ADA]}, created.content
    assert not graph.is_error and json.loads(graph.content) == {"entities": [ADA], "relations": []}
    assert "wrote the first program" in memory_file.read_text()


@needs(FILESYSTEM)
async def test_filesystem_reads_inside_its_folder_and_refuses_outside(tmp_path: Path) -> None:
    allowed = tmp_path / "files"
    allowed.mkdir()
    (allowed / "note.txt").write_text("hello from disk\n")
    (tmp_path / "secret.txt").write_text("not yours\n")
    async with ToolBox([McpSource("files", command=[*FILESYSTEM, str(allowed)])]) as box:
        inside = await call(box, "read_text_file", path=str(allowed / "note.txt"))
        outside = await call(box, "read_text_file", path=str(tmp_path / "secret.txt"))
        climbing = await call(box, "read_text_file", path=f"{allowed}/../secret.txt")
        [write] = [spec for spec in box.specs if spec.name == "write_file"]
    assert not inside.is_error and inside.content == "hello from disk\n"
    for refused in (outside, climbing):
        assert refused.is_error and refused.error_kind == "tool_failed"
        assert refused.content.startswith("Access denied - path outside allowed directories"), refused.content
        assert "not yours" not in refused.content
    assert write.policy.destructive_hint  # so a run asks before it writes (test_toolwire_run.py)


async def check_everything(box: ToolBox, lines: Lines) -> None:
    """The same on either transport: echo, structured content checked against its outputSchema, a log message
    that reaches the server's output, and the task-only tool offered (the server runs 2025-11-25 tasks:
    test_everything_tasks.py calls it)."""
    offered = [spec.name for spec in box.specs]
    assert "echo" in offered and TASK_ONLY in offered
    assert f"toolwire: {texts.tool_needs_tasks('everything', TASK_ONLY)}" not in lines.lines

    echoed = await call(box, "echo", message="hello, everything")
    assert not echoed.is_error and echoed.content == "Echo: hello, everything"
    weather = await call(box, "get-structured-content", location="Chicago")
    assert not weather.is_error and weather.structured is not None
    assert set(weather.structured) == {"temperature", "conditions", "humidity"}
    assert json.loads(weather.content) == weather.structured

    toggled = await call(box, "toggle-simulated-logging")
    assert not toggled.is_error and toggled.content.startswith("Started simulated")
    await await_until(lines.logged, "a log message of server-everything", timeout_s=20, detail=lambda: str(lines.lines))
    stopped = await call(box, "toggle-simulated-logging")  # else its timer keeps the server from ending with stdin
    assert stopped.content.startswith("Stopped simulated"), stopped.content


@needs(EVERYTHING)
async def test_everything_over_stdio() -> None:
    lines = Lines("everything")
    source = McpSource("everything", command=[*EVERYTHING, "stdio"], stderr=lines.stderr)
    async with ToolBox([source]) as box:
        assert source.transport_info().protocol_version == "2025-11-25"
        await check_everything(box, lines)


@needs(EVERYTHING)
async def test_everything_over_streamable_http(tmp_path: Path) -> None:
    lines = Lines("everything")
    with EverythingHttp(tmp_path / "everything.log") as server:
        source = McpSource("everything", url=server.url, stderr=lines.stderr)
        async with ToolBox([source]) as box:
            # A log message sent outside a request travels on the session's GET stream: wait until it is open.
            await await_until(lambda: "Establishing new SSE stream" in server.output(), "the GET stream", timeout_s=20)
            await check_everything(box, lines)
