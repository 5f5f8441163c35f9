"""A tool server the client lists (McpSource) is held to the same listing bounds as the gateway's upstreams (the
MCP kit's listing.py): one whose `tools/list` names a next page for ever, or lists more than `MAX_LISTED` tools,
fails its start with one readable line after `MAX_PAGES` pages, where the client followed it for ever before."""

import sys
from pathlib import Path

import anyio
import pytest

from helpers.servers import REPO
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.source import ToolServerFailed
from toolwire_shared.mcp_kit.listing import MAX_LISTED, MAX_PAGES

HOSTILE = REPO / "tests" / "security" / "hostile_upstream.py"


@pytest.mark.parametrize(
    "mode, said", [("endless", f"its tools go on past {MAX_PAGES} pages"), ("wide", f"more than {MAX_LISTED}")]
)
async def test_an_endless_or_huge_tool_listing_fails_the_start_readably(tmp_path: Path, mode: str, said: str) -> None:
    source = McpSource("hostile", command=[sys.executable, str(HOSTILE), str(tmp_path), mode])
    await source.start()
    try:
        with anyio.fail_after(60), pytest.raises(ToolServerFailed) as failed:
            await source.list_tools()
    finally:
        await source.aclose()
    assert failed.value.kind == "list_failed" and said in str(failed.value), str(failed.value)
    assert int((tmp_path / "pages").read_text()) == (MAX_PAGES if mode == "endless" else 1)  # it asked no further
