"""The tool server stands alone: nothing under server/ imports the agent loop, and `python -m toolwire_server`
serves in an environment where the client package cannot be imported."""

import ast
import subprocess
import sys

from helpers.servers import REPO, TEST_TOOLS
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.source import RunContext, ToolRequest
from toolwire_shared.messages import ToolCall

BLOCK_CLIENT = "import sys; sys.modules['toolwire_client'] = None; import runpy; "


def test_no_server_module_imports_the_client() -> None:
    offenders = []
    for path in sorted((REPO / "server" / "toolwire_server").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] == "toolwire_client"]
    assert offenders == []


def _server_without_client(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    code = BLOCK_CLIENT + "runpy.run_module('toolwire_server', run_name='__main__')"
    argv = [sys.executable, "-c", code, *args]
    return subprocess.run(argv, cwd=REPO, input=stdin, capture_output=True, text=True, timeout=60)


def test_help_works_with_the_client_package_absent() -> None:
    proc = _server_without_client("--help")
    assert proc.returncode == 0, proc.stderr
    assert "[FILE|MODULE[:ATTR]]" in proc.stdout and "--stdio" in proc.stdout


async def test_it_serves_calls_with_the_client_package_absent() -> None:
    code = BLOCK_CLIENT + "runpy.run_module('toolwire_server', run_name='__main__')"
    source = McpSource("alone", command=[sys.executable, "-c", code, TEST_TOOLS, "--stdio"], cwd=str(REPO))
    await source.start()
    try:
        names = [spec.name for spec in await source.list_tools()]
        echo = ToolCall(id="c", name="echo", arguments={"text": "alone"})
        echoed = await source.call(ToolRequest(echo, RunContext("r"), timeout_s=10))
    finally:
        await source.aclose()
    assert "echo" in names and echoed.content == "alone"
