"""How an upstream's listing lands in a registry (no upstream process: the listing is handed over as it would
arrive): hostile names stay under the prefix and valid for providers, a name that collides is skipped rather than
shadowing a tool, a tool the upstream marks destructive needs approval, and a tool it drops is taken out; its
resources land under its namespace, and a subscription while it is down takes no slot."""

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from toolwire_server import Registry
from toolwire_server.upstreams.connection import Endpoint, Listing
from toolwire_server.upstreams.mount import UpstreamMount


def _tool(name: str, **annotations: bool) -> types.Tool:
    notes = types.ToolAnnotations(**annotations) if annotations else None  # type: ignore[arg-type]
    return types.Tool(name=name, input_schema={"type": "object"}, annotations=notes)


def test_names_stay_under_the_prefix_and_valid() -> None:
    registry = Registry("gateway")

    @registry.tool(description="A local tool an upstream must not shadow.")
    def echo(text: str) -> str:
        return text

    mount = UpstreamMount(registry, Endpoint("up", command="unused"), prefix="up__", timeout_s=5)
    hostile = ["../../echo", "echo", "a b/c", "x" * 100, "x" * 100 + "y", "wipe"]
    mount._listed(Listing([_tool(n) for n in hostile[:-1]] + [_tool("wipe", destructiveHint=True)], []))
    names = registry.names()
    assert names[0] == "echo" and registry.get("echo").fn is echo  # type: ignore[union-attr]
    long = names[4:6]  # the two long names: a hash suffix each (never one bare cut, which gave them one name)
    assert names[1:] == ["up________echo", "up__echo", "up__a_b_c", *long, "up__wipe"] and long[0] != long[1]
    assert all(len(n) == 64 and n.startswith("up__" + "x" * 51 + "_") for n in long)
    assert all(len(n) <= 64 for n in names)
    wipe = registry.get("up__wipe")
    assert wipe is not None and wipe.policy.risky and not registry.get("up__echo").policy.risky  # type: ignore[union-attr]
    version = registry.version
    mount._listed(Listing([_tool("echo")], []))
    assert registry.names() == ["echo", "up__echo"] and registry.version > version


async def test_resources_land_under_the_namespace_and_a_subscription_while_down_takes_no_slot() -> None:
    registry = Registry("gateway")
    mount = UpstreamMount(registry, Endpoint("up_1", command="unused"), prefix="up__", timeout_s=5)
    registry.resources.sources.append(mount.resources)
    listed = [types.Resource(uri=u, name="r") for u in ["notes://a", "../../etc/passwd", "up-1+x://y"]]
    templates = [types.ResourceTemplate(uri_template="notes://{id}", name="t")]
    mount._listed(Listing([], [], listed, templates))
    uris = [r.uri for r in registry.resources.listed()]
    assert uris == ["up-1+notes://a", "up-1+../../etc/passwd", "up-1+up-1+x://y"]  # each under the namespace
    assert [t.uri_template for t in registry.resources.listed_templates()] == ["up-1+notes://{id}"]
    assert registry.resources.source_of("up-1+notes://a/x/../b") is mount.resources
    assert registry.resources.source_of("up-1+notes://a/../../b") is None  # climbs out: nobody's
    assert (
        registry.resources.source_of("notes://a") is None and registry.resources.source_of("up-1%2Bnotes://a") is None
    )
    with pytest.raises(MCPError, match="upstream up_1 is restarting; try again in "):
        await mount.resources.subscribe("up-1+notes://0", "ops")  # the upstream is down: it accepted nothing
    assert mount.upstream.watched == set()  # so no slot is taken (tests/security/test_bounded_upstreams.py: the bounds)
    with pytest.raises(MCPError, match="upstream up_1 is restarting; try again in "):
        await mount.resources.read("up-1+notes://a")
