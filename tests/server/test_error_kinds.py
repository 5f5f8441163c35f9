"""The kind of a failure travels with the result as data (`_meta`), never read back from its wording: with every
text reworded (toolwire_shared.errors, toolwire_server.texts and toolwire_client.texts), over stdio and in-process
alike, each failure keeps its kind."""

import sys
from collections.abc import Iterator
from typing import Any

import pytest

from helpers.servers import REPO, TEST_TOOLS
from toolwire_client import texts as client_texts
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.registry_source import RegistrySource
from toolwire_client.tools.source import RunContext, ToolRequest, ToolSource
from toolwire_server import Grant, load_registry
from toolwire_server import texts as server_texts
from toolwire_shared import errors
from toolwire_shared.messages import ToolCall
from toolwire_shared.results import ToolResult

REWORD = (  # the server's side: the texts it shares with the client and its own
    "import toolwire_shared.errors, toolwire_server.texts\n"
    "for e in (toolwire_shared.errors, toolwire_server.texts):\n"
    "    for n in [n for n in dir(e) if not n.startswith('_') and callable(getattr(e, n))]:\n"
    "        setattr(e, n, (lambda n: lambda *a, **k: 'reworded ' + n)(n))\n"
)
SERVE = "import runpy; runpy.run_module('toolwire_server', run_name='__main__')"

CASES: list[tuple[str, dict[str, Any], str | None, bool]] = [
    ("add", {"a": -1, "b": 2}, "bad_arguments", False),
    ("boom", {"message": "disk on fire"}, "tool_failed", False),
    ("slow_with_timeout", {"seconds": 30, "marker": "/dev/null"}, "timeout", False),
    ("no_such_tool", {}, "unknown_tool", False),
    ("bad_order", {}, "bad_output", False),
    ("big_text", {"n": 30_000}, None, True),
]


@pytest.fixture
def reworded(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for module in (errors, server_texts, client_texts):
        for name in [n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n))]:
            monkeypatch.setattr(module, name, lambda *a, _n=name, **k: f"reworded {_n}")
    yield


async def _call(source: ToolSource, name: str, arguments: dict[str, Any]) -> ToolResult:
    call = ToolCall(id="c", name=name, arguments=arguments)
    return await source.call(ToolRequest(call, RunContext("r"), timeout_s=5))  # the tool's own 0.5 s fires


@pytest.mark.parametrize(("tool", "arguments", "kind", "cut"), CASES)
async def test_kinds_survive_rewording_over_stdio(
    tool: str, arguments: dict[str, Any], kind: str | None, cut: bool
) -> None:
    source = McpSource("reworded", command=[sys.executable, "-c", REWORD + SERVE, TEST_TOOLS, "--stdio"], cwd=str(REPO))
    await source.start()
    try:
        result = await _call(source, tool, arguments)
    finally:
        await source.aclose()
    assert result.content.startswith("reworded") or cut, result.content
    assert (result.error_kind, result.truncated) == (kind, cut)


@pytest.mark.parametrize(("tool", "arguments", "kind", "cut"), CASES)
async def test_kinds_survive_rewording_in_process(
    reworded: None, tool: str, arguments: dict[str, Any], kind: str | None, cut: bool
) -> None:
    result = await _call(RegistrySource(load_registry(TEST_TOOLS)), tool, arguments)
    assert result.content.startswith("reworded") or cut, result.content
    assert (result.error_kind, result.truncated) == (kind, cut)


async def test_a_call_outside_the_grant_is_refused_whatever_the_wording(reworded: None) -> None:
    narrow = RegistrySource(load_registry(TEST_TOOLS), grant=Grant(agent="support", patterns=("echo",)))
    assert [s.name for s in await narrow.list_tools()] == ["echo"]
    result = await _call(narrow, "admin_only", {})
    assert (result.content, result.error_kind) == ("reworded refused", "refused")
