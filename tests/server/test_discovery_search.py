"""`serve --config` with `[discovery] mode = "search"` on a real server process (HTTP, and stdio through the toolwire
client): any MCP client is listed `search_tools` and `call_tool` only; a search shows only the tools the caller's
grant allows (hostile: another agent's tool searched for by its exact name and by the words of its description);
`call_tool` goes through the one call pipeline, so grants, limits and the audit trail apply under the tool's name."""

import os
import sys
from pathlib import Path

from helpers.cli import clean_env
from helpers.server_config import POLICY_TOOLS, server_toml
from helpers.servers import REPO, HttpServer, http_client, text_of
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.source import RunContext, ToolRequest
from toolwire_server.policy.audit import read_records
from toolwire_shared.messages import ToolCall
from toolwire_shared.results import ERROR_KIND_META


def config_toml(per_day: int = 1) -> str:
    """The clerk may call echo and get_order (`per_day` times a day), the refunder issue_refund; search discovery,
    every call audited."""
    return server_toml(
        tools=POLICY_TOOLS,
        agents={"clerk": ("tok-clerk", ["echo", "get_order"]), "refunder": ("tok-refunder", ["issue_refund"])},
        limits=[{"agent": "clerk", "tool": "get_order", "per_day": per_day}],
        tables={"discovery": {"mode": "search"}, "audit": {"sqlite": "audit.db"}},
    )


def matches(text: str) -> list[str]:
    """The names a search answered with (its `- name: ...` lines)."""
    return [line[2:].split(":", 1)[0] for line in text.splitlines() if line.startswith("- ")]


async def test_a_search_gateway_lists_two_tools_and_never_reveals_another_agents_tool(tmp_path: Path) -> None:
    config = tmp_path / "server.toml"
    config.write_text(config_toml())
    with HttpServer(f"--config={config}", env=clean_env()) as server:
        async with http_client(server.url, token="tok-clerk") as clerk:
            listed = await clerk.list_tools()
            assert sorted(tool.name for tool in listed.tools) == ["call_tool", "search_tools"]
            by_name = await clerk.call_tool("search_tools", {"query": "issue_refund"})
            by_words = await clerk.call_tool("search_tools", {"query": "refund an order to a card", "limit": 20})
            assert matches(text_of(by_name)) == [] and "No tool matches" in text_of(by_name)
            assert matches(text_of(by_words)) == ["get_order"]  # "order": the one tool it may call that matches
            found = await clerk.call_tool("search_tools", {"query": "look up an order"})
            assert matches(text_of(found)) == ["get_order"] and '"order_id"' in text_of(found)
            sneaked = await clerk.call_tool("call_tool", {"name": "issue_refund", "arguments": {"order_id": "A1"}})
            assert sneaked.is_error and "issue_refund" in text_of(sneaked)
            first = await clerk.call_tool("call_tool", {"name": "get_order", "arguments": {"order_id": "A1"}})
            second = await clerk.call_tool("call_tool", {"name": "get_order", "arguments": {"order_id": "A2"}})
            assert not first.is_error and text_of(first) == "order A1: shipped"
            assert second.is_error and (second.meta or {}).get(ERROR_KIND_META) == "limited"  # its per_day of 1
            bad = await clerk.call_tool("search_tools", {"query": ""})
            assert bad.is_error and "search_tools needs a `query`" in text_of(bad)
        async with http_client(server.url, token="tok-refunder") as refunder:
            found = await refunder.call_tool("search_tools", {"query": "refund an order to a card"})
            assert matches(text_of(found)) == ["issue_refund"]
    records = read_records(str(tmp_path / "audit.db"))  # the server has stopped: every record written
    assert [(r["agent"], r["tool"], r["outcome"]) for r in records] == [
        ("clerk", "issue_refund", "refused"),
        ("clerk", "get_order", "ok"),
        ("clerk", "get_order", "limited"),
    ]


async def test_the_toolwire_client_finds_and_calls_through_a_stdio_search_gateway(tmp_path: Path) -> None:
    config = tmp_path / "server.toml"
    config.write_text(config_toml(per_day=5))
    argv = [sys.executable, "-m", "toolwire_server", "--config", str(config), "--stdio", "--agent", "clerk"]
    env = {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}  # this checkout's server, as the HTTP one gets
    source = McpSource("gateway", command=argv, env=env, cwd=str(REPO))
    await source.start()
    try:
        assert sorted(spec.name for spec in await source.list_tools()) == ["call_tool", "search_tools"]

        async def call(name: str, arguments: dict[str, object]) -> str:
            request = ToolRequest(ToolCall(id="c", name=name, arguments=arguments), RunContext("run_1"), 10.0)
            return (await source.call(request)).content

        assert matches(await call("search_tools", {"query": "echo text back"})) == ["echo"]
        assert await call("call_tool", {"name": "echo", "arguments": {"text": "hi"}}) == "hi"
    finally:
        await source.aclose()
