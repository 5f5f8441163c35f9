"""Clients nobody here wrote: the official MCP conformance suite (server mode) and the MCP Inspector CLI.

Those need Node 22 with @modelcontextprotocol/conformance@0.1.16 and @modelcontextprotocol/inspector@2.12.0 installed
in $TOOLWIRE_NODE_DIR (CI: ./node22 at the repo root); the check that the conformance fixtures exist needs no Node and
always runs. The fixtures are examples/conformance_tasks.py's, the module 0.2.0-alpha.12 runs against too
(test_tasks_node.py)."""

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.servers import CONFORMANCE_TOOLS, REPO, TEST_TOOLS, HttpServer, http_client, serve_argv

NODE_DIR = Path(os.environ.get("TOOLWIRE_NODE_DIR") or REPO / "node22")
BIN = NODE_DIR / "node_modules" / ".bin"
BASELINE = Path(__file__).with_name("conformance-baseline.yml")
FIXTURE_TOOLS = {
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_error_handling",
    "test_tool_with_progress",
    "test_tool_with_logging",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "json_schema_2020_12_tool",
    "test_reconnection",
}
FIXTURE_PROMPTS = {
    "test_simple_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
}
FIXTURE_RESOURCES = {"test://static-text", "test://static-binary", "test://watched-resource"}

NO_NODE = pytest.mark.skipif(
    not (BIN / "node").exists(),
    reason=f"Node 22 not found at {BIN} (set TOOLWIRE_NODE_DIR; see .ci/run for the npm install line)",
)


def _node_env(home: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "HOME": str(home)}


@pytest.fixture(scope="module")
def conformance_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    tasks = tmp_path_factory.mktemp("conformance") / "tasks.sqlite"  # the module serves 0.2.0's task fixtures too
    with HttpServer(CONFORMANCE_TOOLS, env={"TOOLWIRE_TASK_STORE": str(tasks)}) as running:
        yield running


async def test_conformance_fixtures_exist(conformance_server: HttpServer) -> None:
    # Some conformance checks pass even when a fixture is missing, so check the names ourselves (no Node needed).
    async with http_client(conformance_server.url) as client:
        assert {tool.name for tool in (await client.list_tools()).tools} >= FIXTURE_TOOLS
        assert {prompt.name for prompt in (await client.list_prompts()).prompts} >= FIXTURE_PROMPTS
        assert {str(r.uri) for r in (await client.list_resources()).resources} == FIXTURE_RESOURCES
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["test://template/{id}/data"]


@pytest.mark.node
@NO_NODE
def test_conformance_suite_passes(conformance_server: HttpServer, tmp_path: Path) -> None:
    url = f"http://localhost:{conformance_server.port}/mcp"  # the suite's DNS-rebinding scenario needs localhost
    proc = subprocess.run(
        [
            *(str(BIN / "conformance"), "server", "--url", url, "--suite", "all"),
            *("--expected-failures", str(BASELINE), "-o", str(tmp_path)),
        ],
        env=_node_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    summary = proc.stdout[proc.stdout.index("=== SUMMARY ===") :]
    failed = [line for line in summary.splitlines() if line.startswith("✗")]
    assert not failed, summary
    for scenario in (
        "server-initialize",
        "tools-call-with-logging",
        "completion-complete",
        "json-schema-2020-12",
        "elicitation-sep1034-defaults",
        "elicitation-sep1330-enums",
        "resources-templates-read",
        "resources-subscribe",
        "prompts-get-with-args",
        "prompts-get-embedded-resource",
        "server-sse-polling",
        "dns-rebinding-protection",
    ):
        assert f"✓ {scenario}:" in summary, summary
    passed, total = _totals(summary)
    assert passed == total >= 44, summary


def _totals(summary: str) -> tuple[int, int]:
    """(checks passed, checks in all) from the suite's `Total: N passed, M failed` line."""
    line = next(line for line in summary.splitlines() if line.startswith("Total:"))
    numbers = [int(word) for word in line.replace(",", " ").split() if word.isdigit()]
    return numbers[0], numbers[0] + numbers[1]


def _inspector(args: list[str], home: Path) -> tuple[int, dict[str, object]]:
    proc = subprocess.run(
        [str(BIN / "mcp-inspector"), "--cli", *args, "--format", "json", "-q"],
        env=_node_env(home),
        capture_output=True,
        text=True,
        timeout=90,
        cwd=REPO,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"rc={proc.returncode} stdout={proc.stdout[-2000:]} stderr={proc.stderr[-2000:]}"
    return proc.returncode, json.loads(lines[-1])


@pytest.mark.node
@NO_NODE
def test_inspector_over_stdio(tmp_path: Path) -> None:
    server = serve_argv(TEST_TOOLS, "--stdio")
    rc, listed = _inspector([*server, "--method", "tools/list"], tmp_path)
    assert rc == 0
    names = {tool["name"] for tool in listed["result"]["tools"]}  # type: ignore[index]
    assert {"echo", "add", "boom"} <= names
    rc, called = _inspector(
        [*server, "--method", "tools/call", "--tool-name", "echo", "--tool-args-json", '{"text": "hello"}'], tmp_path
    )
    assert rc == 0 and called["result"]["content"] == [{"type": "text", "text": "hello"}]  # type: ignore[index]
    rc, failed = _inspector(
        [*server, "--method", "tools/call", "--tool-name", "boom", "--tool-args-json", '{"message": "no"}'], tmp_path
    )
    assert rc == 5 and failed["result"]["isError"] is True  # type: ignore[index]


@pytest.mark.node
@NO_NODE
def test_inspector_over_http(tmp_path: Path) -> None:
    with HttpServer(TEST_TOOLS) as server:
        rc, listed = _inspector([server.url, "--method", "tools/list"], tmp_path)
        assert rc == 0 and "rendezvous" in {t["name"] for t in listed["result"]["tools"]}  # type: ignore[index]
        rc, called = _inspector(
            [server.url, "--method", "tools/call", "--tool-name", "add", "--tool-args-json", '{"a": 2, "b": 40}'],
            tmp_path,
        )
        assert rc == 0 and called["result"]["content"] == [{"type": "text", "text": "42"}]  # type: ignore[index]


@pytest.mark.node
@NO_NODE
def test_inspector_reads_prompts_and_resources_over_stdio(tmp_path: Path) -> None:
    server = serve_argv("tests/server/surface.py:registry", "--stdio")
    rc, got = _inspector(
        [*server, "--method", "prompts/get", "--prompt-name", "summarize", "--prompt-args", "ticket=T-9"], tmp_path
    )
    assert rc == 0
    first = got["result"]["messages"][0]  # type: ignore[index]
    assert first == {"role": "user", "content": {"type": "text", "text": "Summarize ticket T-9 in a neutral tone."}}
    rc, read = _inspector([*server, "--method", "resources/read", "--uri", "orders://B200"], tmp_path)
    assert rc == 0
    assert read["result"]["contents"][0]["text"] == "order B200: headphones"  # type: ignore[index]
