"""Issue 33 §6: an upstream and the agents behind the gateway (`toolwire serve --config`) cannot grow it without
end. A hostile upstream (hostile_upstream.py, over stdio) whose `tools/list` names a next page for ever, or lists
10,001 tools, has that listing refused (logged, the previous one kept) after `MAX_PAGES` pages; one agent's
subscriptions to made-up URIs take none of the upstream's `MAX_WATCHED` slots (the upstream refused them), and its
real ones stop at `MAX_WATCHED_PER_AGENT`, so another agent still subscribes."""

import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from helpers.polling import await_until
from helpers.server_config import POLICY_TOOLS, server_toml
from helpers.servers import REPO, HttpServer, http_client, text_of
from toolwire_server.upstreams.connection import MAX_LISTED, MAX_PAGES
from toolwire_server.upstreams.resources import MAX_WATCHED, MAX_WATCHED_PER_AGENT

HOSTILE = REPO / "tests" / "security" / "hostile_upstream.py"


def _config(folder: Path) -> Path:
    path = folder / "server.toml"
    agents = {name: (f"tok-{name}", ["hostile__*", "hostile+*"]) for name in ("mallory", "alice")}
    upstreams = {"hostile": [sys.executable, str(HOSTILE), str(folder)]}
    path.write_text(server_toml(tools=POLICY_TOOLS, agents=agents, upstreams=upstreams))
    return path


async def _tool_names(client: Client) -> set[str]:
    return {t.name for t in (await client.list_tools()).tools if t.name.startswith("hostile__")}


async def test_an_endless_or_huge_listing_is_refused_and_the_previous_one_kept(tmp_path: Path) -> None:
    with HttpServer(f"--config={_config(tmp_path)}") as gateway:
        async with http_client(gateway.url, token="tok-mallory") as client:
            assert await _tool_names(client) == {"hostile__endless", "hostile__wide"}
            assert text_of(await client.call_tool("hostile__endless", {})) == "endless now"
            await await_until(
                lambda: f"go on past {MAX_PAGES} pages" in gateway.stderr(), "the endless listing refused", timeout_s=60
            )
            assert (tmp_path / "pages").read_text() == str(MAX_PAGES)  # it asked no further
            assert await _tool_names(client) == {"hostile__endless", "hostile__wide"}  # the listing before it

            assert text_of(await client.call_tool("hostile__wide", {})) == "wide now"
            await await_until(
                lambda: f"are more than {MAX_LISTED}" in gateway.stderr(), "the huge listing refused", timeout_s=60
            )
            assert await _tool_names(client) == {"hostile__endless", "hostile__wide"}
            assert text_of(await client.call_tool("hostile__endless", {})) == "endless now"  # it still answers


async def _subscribe_all(client: Client, uris: list[str]) -> list[str]:
    """Subscribe to each URI (50 at a time); the refusals' messages, "" where it was accepted."""
    answers: dict[str, str] = {}

    async def one(uri: str) -> None:
        try:
            await client.subscribe_resource(uri)
            answers[uri] = ""
        except MCPError as exc:
            answers[uri] = exc.error.message

    for start in range(0, len(uris), 50):
        async with anyio.create_task_group() as tg:
            for uri in uris[start : start + 50]:
                tg.start_soon(one, uri)
    return [answers[uri] for uri in uris]


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # the handshake era's subscribe
async def test_one_agent_cannot_take_every_subscription_slot_of_an_upstream(tmp_path: Path) -> None:
    with HttpServer(f"--config={_config(tmp_path)}") as gateway:
        async with http_client(gateway.url, token="tok-mallory", mode="legacy") as mallory:
            fakes = await _subscribe_all(mallory, [f"hostile+notes://fake-{n}" for n in range(MAX_WATCHED)])
            assert fakes == [f"upstream hostile: no such resource: notes://fake-{n}" for n in range(MAX_WATCHED)]
            reals = await _subscribe_all(mallory, [f"hostile+notes://real-{n}" for n in range(MAX_WATCHED_PER_AGENT)])
            assert reals == [""] * MAX_WATCHED_PER_AGENT  # the fakes took no slot
            with pytest.raises(MCPError, match=f"subscribed to {MAX_WATCHED_PER_AGENT} resources of upstream hostile"):
                await mallory.subscribe_resource("hostile+notes://real-one-more")
            await mallory.subscribe_resource("hostile+notes://real-0")  # one it holds already: nothing new to take

        async with http_client(gateway.url, token="tok-alice", mode="legacy") as alice:
            await alice.subscribe_resource("hostile+notes://real-alice")  # another agent still can
            await alice.subscribe_resource("hostile+notes://real-0")
