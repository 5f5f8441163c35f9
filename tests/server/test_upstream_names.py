"""How an upstream's listing lands in a registry (no upstream process: the listing is handed over as it would
arrive): hostile names stay under the prefix and valid for providers, a name that collides is skipped rather than
shadowing a tool, a tool the upstream marks destructive needs approval, and a tool it drops is taken out."""

import mcp_types as types

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
    assert names[1:] == ["up________echo", "up__echo", "up__a_b_c", "up__" + "x" * 60, "up__wipe"]  # 2nd long: taken
    assert all(len(n) <= 64 for n in names)
    wipe = registry.get("up__wipe")
    assert wipe is not None and wipe.policy.risky and not registry.get("up__echo").policy.risky  # type: ignore[union-attr]
    version = registry.version
    mount._listed(Listing([_tool("echo")], []))
    assert registry.names() == ["echo", "up__echo"] and registry.version > version
