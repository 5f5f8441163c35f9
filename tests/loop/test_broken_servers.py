"""Servers nobody here wrote, broken at start-up, and a user's own tools module that does not import: each is one
line naming the real cause and whose it is (the server's words, its stderr, the bad tool and field, the user's file
and line), exit status 1, never "a bug in toolwire" nor a traceback; a tool whose schema is broken is skipped and
the server's other tools still work."""

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.cli import clean_env, run_toolwire
from helpers.servers import REPO, serve_argv
from loop.broken_server import DYING_WORDS, LIST_ERROR, TASK_CANCELS, TASK_FAILED
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.server_stderr import ServerStderr
from toolwire_client.tools.source import RunContext, ToolServerFailed
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import ToolCall

BROKEN = Path(__file__).with_name("broken_server.py")
RUN = ("run", "What does order A123 cost?", "--model", "scripted:recovers")


def broken(mode: str) -> str:
    return f"{sys.executable} {BROKEN} {mode}"


def toolwire(tmp_path: Path, *args: str, cwd: Path = REPO) -> tuple[int, str]:
    env = clean_env(TOOLWIRE_DB=str(tmp_path / "runs.db"), TOOLWIRE_LOG_DIR=str(tmp_path / "logs"))
    done = run_toolwire(*args, env=env, cwd=cwd)
    out = done.stdout + done.stderr
    assert "Traceback" not in out and "Exception Group" not in out, out
    assert "bug in toolwire" not in out and "cancel scope" not in out, out
    return done.returncode, out


def error_line(out: str) -> str:
    lines = [line for line in out.splitlines() if line.startswith("Error: ")]
    assert len(lines) == 1, out
    return lines[0]


def test_a_tools_list_error_is_the_servers_own_message(tmp_path: Path) -> None:
    code, out = toolwire(tmp_path, *RUN, "--server", broken("list_error"))
    assert code == 1, out
    assert (
        error_line(out)
        == f"Error: tool server `{broken('list_error')}` answered tools/list with an error: {LIST_ERROR}"
    )
    assert "restarting" not in out, out  # its -32000 is its answer, not a lost connection


def test_a_server_that_exits_after_initialize_is_quoted_from_its_stderr(tmp_path: Path) -> None:
    code, out = toolwire(tmp_path, *RUN, "--server", broken("exit_after_initialize"))
    assert code == 1, out
    line = error_line(out)
    assert line.startswith(
        f"Error: tool server `{broken('exit_after_initialize')}` exited after MCP's initialize, before it listed its "
        f"tools: {DYING_WORDS} (tool server output: "
    ), line
    assert "restarting" not in out, out  # a failed start, not a crash to restart it for


async def test_a_failed_start_closes_the_source_and_raises_the_cause_not_the_cleanups_error() -> None:
    source = McpSource("broken", command=[sys.executable, str(BROKEN), "list_error"])
    with pytest.raises(ToolServerFailed) as caught:
        async with ToolBox([source]):
            pass
    assert caught.value.kind == "list_failed" and caught.value.said == LIST_ERROR


async def test_a_tool_without_a_type_is_skipped_with_a_note_and_the_good_tool_works() -> None:
    notes: list[str] = []
    stderr = ServerStderr("broken", lambda server, line: notes.append(line))
    source = McpSource("broken", command=[sys.executable, str(BROKEN), "no_type"], stderr=stderr)
    async with ToolBox([source]) as box:
        assert [spec.name for spec in box.specs] == ["good_tool"]
        result = await box.call(ToolCall(id="g", name="good_tool", arguments={"text": "still here"}), RunContext("r"))
        assert not result.is_error and result.content == "still here"
    skipped = [note for note in notes if "bad_tool" in note]
    assert skipped == [
        "toolwire: tool 'bad_tool' of server 'broken': inputSchema has no \"type\"; skipped, the server's other tools "
        "are offered"
    ], notes


def test_the_skipped_tool_is_said_with_v(tmp_path: Path) -> None:
    code, out = toolwire(tmp_path, *RUN, "-v", "--server", broken("no_type"))
    assert code == 1, out  # the scripted model asks for get_order, which this server does not have
    assert "tool 'bad_tool' of server 'python': inputSchema has no \"type\"; skipped" in out, out
    assert "Tools you may call: good_tool" in out, out


NAME_ERROR = '''from toolwire_server import Registry

registry = Registry("mine")


@registry.tool()
def echo(text: str) -> str:
    """Echo the text."""
    return text


print(x)
'''
SYNTAX_ERROR = """from toolwire_server import Registry

registry = Registry("mine")
def echo(text: str -> str:
    return text
"""


def served_to_exit(folder: Path, *args: str) -> "subprocess.CompletedProcess[str]":
    """`toolwire serve ARGS` in `folder`, with nothing on its stdin, run until it exits (these ones do not serve)."""
    argv = serve_argv(*args)
    return subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize(
    ("source", "said"),
    [
        (NAME_ERROR, "tools.py line 12: NameError: name 'x' is not defined"),
        (SYNTAX_ERROR, "tools.py line 4: SyntaxError: "),
    ],
    ids=["name-error", "syntax-error"],
)
def test_an_error_in_the_users_tools_module_names_their_file_and_line(source: str, said: str, tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text(source)
    served = served_to_exit(tmp_path, "tools.py:registry", "--stdio")
    assert served.returncode == 1, served.stderr
    assert served.stderr.strip().startswith(f"Error: {said}"), served.stderr
    assert "bug in toolwire" not in served.stderr and "Traceback" not in served.stderr, served.stderr
    code, out = toolwire(tmp_path, *RUN, "--server", "toolwire serve tools.py:registry --stdio", cwd=tmp_path)
    assert code == 1, out
    line = error_line(out)
    assert "stopped before it answered MCP's initialize: Error: " + said in line, line


def test_an_unknown_db_scheme_is_refused_and_makes_no_folder(tmp_path: Path) -> None:
    for args in [(*RUN, "--server", "true", "--db", "mysql://x/y"), ("runs", "--db", "mysql://x/y")]:
        code, out = toolwire(tmp_path, *args, cwd=tmp_path)
        assert code == 2, out
        assert error_line(out).startswith(
            "Error: Invalid value for '--db': unknown run store 'mysql://': use a SQLite file path, sqlite:///PATH, "
            "or a postgresql:// (or postgres://) URL"
        ), out
        assert not (tmp_path / "mysql:").exists()


def test_serve_on_a_busy_port_says_so_and_not_serving() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = served_to_exit(REPO, "examples.support_tools:registry", "--http", "--port", str(port))
    assert done.returncode == 1, done.stderr
    assert "serving" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"Error: port {port} on 127.0.0.1 is in use (another server listens there): stop it or choose another --port"
    ], done.stderr


async def test_a_legacy_task_server_that_misbehaves_gets_readable_results(tmp_path: Path) -> None:
    """A handshake-era server that says it runs 2025-11-25 tasks: a call answered without a task, a task that
    fails, and one that asks to be polled once an hour (the call's timeout cancels it) end as readable results."""
    cancels = tmp_path / "cancels"
    hostile = [sys.executable, str(BROKEN), "legacy_tasks"]
    source = McpSource("hostile", command=hostile, env={TASK_CANCELS: str(cancels)})
    async with ToolBox([source]) as box:
        assert [spec.name for spec in box.specs] == ["task_job"]

        async def call(how: str) -> str:
            job = ToolCall(id=f"call_{how}", name="task_job", arguments={"how": how})
            result = await box.call(job, RunContext("run_hostile"), timeout_s=1)
            assert result.is_error, result
            return result.content

        assert "answered a task-augmented call without a task" in await call("no_task")
        assert TASK_FAILED in await call("fails")
        stalled = await call("stalls")
    assert "timed out after 1 s" in stalled and "its task was cancelled" in stalled, stalled
    assert cancels.read_text() == "stalls\n"
