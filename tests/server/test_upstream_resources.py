"""An upstream's resources behind `toolwire serve --config`: listed and read as `NAME+<its URI>` in both protocol
eras (server-everything's, over stdio: tests/external/test_gateway_resources.py); a grant names them by those
URIs, and hostile reads (outside the grant, `..`, escapes, another upstream's namespace, the bare URI) all meet
the same "unknown" error; a tool's resource link is readable here; the upstream's resources/list_changed and
resources/updated reach the agent. And the health check: the HTTP upstream killed -9 while idle is noticed by its
ping (the gateway's log line), with no call, and answered readably until it is back. Mistakes in the entry:
one line from `toolwire check`."""

import os
import signal
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.subscriptions import ResourceUpdated

from helpers.polling import await_until
from helpers.servers import REPO, HttpServer, http_client, text_of
from toolwire_client.cli import main
from toolwire_server.upstreams.resources import namespace_of
from toolwire_shared.results import ERROR_KIND_META, RETRY_AFTER_META

UPSTREAM = f"{REPO}/tests/server/upstream_tools.py:registry"
TOOLS = f"{REPO}/tests/server/policy_tools.py:registry"


def _config(folder: Path, url: str) -> Path:
    path = folder / "server.toml"
    path.write_text(
        f"""
tools = "{TOOLS}"

[agents.ops]
token = "tok-ops"
tools = ["own__*", "own+*", "two+*"]

[agents.reader]
token = "tok-reader"
tools = ["own__readme_link", "own+notes://public/*"]

[agents.tools-only]
token = "tok-tools"
tools = ["own__*"]

[upstreams.own]
url = "{url}"
ping_s = 0.3

[upstreams.two]                   # the same server again: the same URIs, in a namespace of their own
url = "{url}"
"""
    )
    return path


async def _read(client: Client, uri: str) -> str:
    contents = (await client.read_resource(uri)).contents
    assert [c.uri for c in contents] == [uri.replace("%2E%2E/", "")]  # the URI as read here, not the upstream's
    return contents[0].text  # type: ignore[union-attr]


async def _refused(client: Client, uri: str) -> str:
    with pytest.raises(MCPError) as caught:
        await client.read_resource(uri)
    return caught.value.error.message


async def test_resources_grants_hostile_uris_links_list_changed_and_a_ping(tmp_path: Path) -> None:
    upstream = HttpServer(UPSTREAM)
    with upstream, HttpServer(f"--config={_config(tmp_path, upstream.url)}") as gateway:
        async with http_client(gateway.url, token="tok-ops") as ops:  # 2026-07-28 era
            uris = {r.uri for r in (await ops.list_resources()).resources}
            assert {"own+notes://public/readme", "own+notes://private/secret", "two+notes://public/readme"} <= uris
            templates = {t.uri_template for t in (await ops.list_resource_templates()).resource_templates}
            assert templates == {"own+notes://public/{name}", "two+notes://public/{name}"}
            assert await _read(ops, "own+notes://private/secret") == "the secret"
            assert await _read(ops, "two+notes://public/readme") == "read me"
            assert await _read(ops, "own+notes://public/ada") == "note ada"  # through the upstream's template
            name = types.ResourceTemplateReference(uri="own+notes://public/{name}")
            completed = await ops.complete(name, {"name": "name", "value": "a"})
            assert completed.completion.values == ["ada", "alan"]  # the upstream's completion of its template
            greet = types.PromptReference(name="own__greet")
            completed = await ops.complete(greet, {"name": "name", "value": "g"})
            assert completed.completion.values == ["grace"]  # and of its prompt's argument
            # A subscription on a listen stream is passed on to the upstream; its update comes back, renamed.
            async with ops.listen(resource_subscriptions=["own+notes://public/readme"]) as updates:
                assert text_of(await ops.call_tool("own__touch_readme", {})) == "touched"
                with anyio.fail_after(15):
                    updated = await anext(updates)
                assert isinstance(updated, ResourceUpdated) and updated.uri == "own+notes://public/readme"

        async with http_client(gateway.url, token="tok-reader", mode="legacy") as reader:  # the handshake era
            listed = (await reader.list_resources()).resources
            assert [r.uri for r in listed] == ["own+notes://public/readme"]
            templates = (await reader.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["own+notes://public/{name}"]
            assert await _read(reader, "own+notes://public/readme") == "read me"
            unknown = await _refused(reader, "own+notes://nowhere/x")
            for hostile in [
                "own+notes://private/secret",  # outside its grant
                "own+notes://public/../private/secret",  # climbs out of the granted path
                "own+notes://public/%2E%2E/private/secret",  # the same, escaped
                "own+notes://public/..%2Fprivate/secret",  # an escaped separator
                "own%2Bnotes://public/readme",  # the namespace's `+` escaped
                "two+notes://public/readme",  # another upstream's namespace
                "notes://public/readme",  # the upstream's own URI, bare
            ]:
                message = await _refused(reader, hostile)
                assert message == unknown.replace("own+notes://nowhere/x", hostile), message
            # A link in a tool's result points here, readable as it is.
            link = (await reader.call_tool("own__readme_link", {})).content[0]
            assert isinstance(link, types.ResourceLink) and link.uri == "own+notes://public/readme"
            assert await _read(reader, link.uri) == "read me"

        async with http_client(gateway.url, token="tok-tools") as tools_only:
            assert (await tools_only.list_resources()).resources == []
            assert (await tools_only.list_resource_templates()).resource_templates == []
            await _refused(tools_only, "own+notes://public/readme")
            with pytest.raises(MCPError, match="nothing to complete: no resource template"):
                await tools_only.complete(
                    types.ResourceTemplateReference(uri="own+notes://public/{name}"), {"name": "name", "value": "a"}
                )

        heard: list[Any] = []

        async def note(message: Any) -> None:
            heard.append(message)

        async with http_client(gateway.url, token="tok-ops", mode="legacy") as ops:
            ops._session._message_handler = note  # type: ignore[union-attr]  # the standalone channel's messages
            with pytest.warns(MCPDeprecationWarning):  # the handshake era's subscription
                await ops.subscribe_resource("own+notes://public/readme")
            assert text_of(await ops.call_tool("own__add_note", {"name": "fresh"})) == "added"
            await await_until(
                lambda: any(isinstance(m, types.ResourceListChangedNotification) for m in heard),
                "resources/list_changed from the upstream to reach the agent",
                timeout_s=15,
            )
            assert "own+notes://public/added/fresh" in {r.uri for r in (await ops.list_resources()).resources}
            assert await _read(ops, "own+notes://public/added/fresh") == "added fresh"
            assert text_of(await ops.call_tool("own__touch_readme", {})) == "touched"
            await await_until(
                lambda: any(
                    isinstance(m, types.ResourceUpdatedNotification) and m.params.uri == "own+notes://public/readme"
                    for m in heard
                ),
                "resources/updated from the upstream to reach the subscriber",
                timeout_s=15,
            )

        await _an_idle_upstream_killed_is_noticed_by_its_ping(upstream, gateway)


async def _an_idle_upstream_killed_is_noticed_by_its_ping(upstream: HttpServer, gateway: HttpServer) -> None:
    async with http_client(gateway.url, token="tok-ops") as ops:
        first = int(text_of(await ops.call_tool("own__pid", {})))
        assert upstream.proc is not None and first == upstream.proc.pid
        os.kill(first, signal.SIGKILL)
        upstream.proc.wait()
        # No call: the gateway's ping notices, and says so.
        await await_until(
            lambda: "upstream own did not answer a ping" in gateway.stderr(),
            "the ping to notice",
            timeout_s=8,
            log=gateway.stderr_path,
        )
        down = await ops.call_tool("own__pid", {})  # never sent: the gateway knew, so it did not run
        assert (down.meta or {}).get(ERROR_KIND_META) == "limited" and (down.meta or {})[RETRY_AFTER_META] >= 1
        assert text_of(down).startswith("upstream own is restarting; try again in "), text_of(down)
        assert "upstream own is restarting" in await _refused(ops, "own+notes://public/readme")
        with upstream:  # back, on the same port

            async def back() -> int:
                answer = await ops.call_tool("own__pid", {})
                return 0 if answer.is_error else int(text_of(answer))

            second = await await_until(back, "the upstream to be reconnected", timeout_s=20, interval_s=0.2)
            assert second != first
            assert await _read(ops, "own+notes://public/readme") == "read me"


def test_serve_check_names_a_bad_ping_or_a_shared_namespace_in_one_line(tmp_path: Path) -> None:
    host = tmp_path / "host_tools.py"
    host.write_text(
        "from toolwire_server import Registry\n"
        "registry = Registry('host')\n"
        "@registry.resource('own+notes://mine')\n"
        "def mine() -> str:\n    return 'the host'\n"
    )
    upstream = '[upstreams.{name}]\ncommand = "ls"\n'
    bad = {
        upstream.format(name="own") + "ping_s = 0\n": "upstreams.own.ping_s: input should be greater than or equal",
        upstream.format(name="x") + "ping_s = -5\n": "upstreams.x.ping_s: input should be greater than or equal",
        upstream.format(name="x") + 'ping_s = "often"\n': "upstreams.x.ping_s: input should be a valid number",
        upstream.format(name="a_b") + upstream.format(name="a-b"): "upstreams a_b and a-b would share resource URIs",
        upstream.format(name="own"): "upstreams.own: its resources (own+...) would hide 'own+notes://mine'",
        '[agents.x]\ntoken = "t"\ntools = ["onw+*"]\n' + upstream.format(name="own2"): "'onw+*', which matches no",
    }
    for entry, message in bad.items():
        config = tmp_path / "server.toml"
        config.write_text(f'tools = "{host}:registry"\n{entry}')
        done = CliRunner().invoke(main, ["check", str(config)])
        assert done.exit_code == 1 and message in done.output, done.output
        assert len(done.output.strip().splitlines()) == 1, done.output
    config.write_text(
        f'tools = "{host}:registry"\n[agents.x]\ntoken = "t"\ntools = ["x+*"]\n{upstream.format(name="x")}'
    )
    assert CliRunner().invoke(main, ["check", str(config)]).exit_code == 0  # a grant of its resources


def test_resource_namespaces_are_uri_schemes() -> None:
    assert [namespace_of(n) for n in ["own", "a_b", "9lives", "X-1"]] == ["own+", "a-b+", "mcp-9lives+", "X-1+"]
