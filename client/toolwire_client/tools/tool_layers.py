"""The ToolBox's concerns over the tools its sources list, each one small layer it stacks over the listing (as
Pydantic AI stacks FilteredToolset, PrefixedToolset and ApprovalRequiredToolset over a toolset): the `--allow`
filter, the wire names, the approval marks of a servers file. A layer takes the routes the layer below it offers
and returns those it offers; it may drop a route, rename or mark its spec, or add a route to a source of its own
(a tool search or code mode is one more layer). See docs/ARCHITECTURE.md, "The tool source seam"."""

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

from toolwire_client.tools.source import ToolSource
from toolwire_client.tools.tool_names import known_names
from toolwire_shared.tools import ToolSpec
from toolwire_shared.wire_names import wire_names


@dataclass(frozen=True)
class Route:
    source: ToolSource
    remote_name: str
    """The tool's name on its source."""
    spec: ToolSpec
    """As the model sees it: named by its wire name once the wire names are given."""
    known: str
    """The one name of the tool in the run (spans, timeouts): the tool's own name, or `SOURCE__NAME` (a name two
    sources share, or one that reads as another source's)."""
    aliases: frozenset[str]
    """What `--risky` and `--allow` name it by (tools/tool_names.py), its wire name too: bound to this source's tool."""
    offered: bool = True
    """False: routed, but not offered to the model (a tool search has not loaded it yet: tools/tool_search.py; a tool
    code mode's `only` leaves to scripts: tools/code_mode/)."""
    loads_only: bool = False
    """True: a call of it loads the tool (a tool search's gate) and runs nothing, so it asks no person."""
    unloaded: "Route | None" = None
    """A tool search's tool not loaded yet (this route goes to its gate): the tool's own route, which a code-mode
    script calls (tools/code_mode/layer.py)."""


class NoSuchTool(ValueError):
    """An --allow pattern, a --risky name or a --tool-choice that names no tool of the run (a usage mistake)."""

    def __init__(self, option: str, value: str, tools: list[str], of: str = "this run"):
        self.option, self.value, self.tools = option, value, tools
        what = "matches" if option == "--allow" else "names"
        listed = ", ".join(tools) if tools else "none"
        super().__init__(f"{option} {value!r} {what} no tool of {of} (its tools: {listed})")


class ToolLayer(Protocol):
    def check(self, named: list[Route], sources: Sequence[ToolSource]) -> None:
        """Raise NoSuchTool for a setting of this layer that names no tool of the run: said once every source has
        listed its tools (`named`: every tool, before any layer), since a name may be on any server."""

    def offer(self, routes: list[Route]) -> list[Route]:
        """The routes offered above this layer, from those offered below it."""
        ...

    def changed(self) -> bool:
        """True when this layer would offer other routes than at its last `offer` (it loaded or added a tool): the
        ToolBox routes again before the next model call."""
        ...


@runtime_checkable
class LoadingLayer(Protocol):
    """A layer whose offer changes as the run goes (tool search's loads): the ToolBox routes again before the next
    request when it `changed()`, and a step records `loaded` (None while the layer offers every tool as it is)."""

    def changed(self) -> bool: ...

    @property
    def loading(self) -> list[str] | None: ...

    def load(self, names: Sequence[str]) -> list[str]: ...

    def restore(self, names: Sequence[str]) -> None: ...


def named(listed: list[tuple[ToolSource, ToolSpec]]) -> list[Route]:
    """The bottom of the stack: every tool listed, with the names users know it by (tools/tool_names.py)."""
    names = known_names((source.name, spec.name) for source, spec in listed)
    return [
        Route(source, spec.name, spec, names[source.name, spec.name].known, names[source.name, spec.name].aliases)
        for source, spec in listed
    ]


def _tool_names(named: list[Route]) -> list[str]:
    return sorted({route.known for route in named})


class AllowFilter:
    """`--allow`: only the tools one of whose names matches a pattern (fnmatch); None offers every tool."""

    def __init__(self, allow: list[str] | None):
        self.allow = allow

    def allows(self, name: str) -> bool:
        return self.allow is None or any(fnmatch.fnmatchcase(name, pattern) for pattern in self.allow)

    def check(self, named: list[Route], sources: Sequence[ToolSource]) -> None:
        for pattern in self.allow or []:
            if not any(fnmatch.fnmatchcase(n, pattern) for route in named for n in route.aliases):
                raise NoSuchTool("--allow", pattern, _tool_names(named))

    def offer(self, routes: list[Route]) -> list[Route]:
        return [route for route in routes if any(map(self.allows, route.aliases))]

    def changed(self) -> bool:
        return False


class WireNames:
    """Each tool renamed to its wire name (toolwire_shared/wire_names.py, made from its known name), which names
    it too; the spec is copied only when the name differs."""

    def check(self, named: list[Route], sources: Sequence[ToolSource]) -> None:
        return None

    def __init__(self) -> None:
        self._known: tuple[str, ...] = ()
        self._wire: dict[str, str] = {}
        self._made: dict[int, tuple[Route, Route]] = {}
        """id(route below) -> (it, the route named): a tool search's load routes hundreds of the same routes again."""

    def offer(self, routes: list[Route]) -> list[Route]:
        known = tuple(route.known for route in routes)
        if known != self._known:
            self._known, self._wire, self._made = known, wire_names(known), {}
        offered: list[Route] = []
        for route in routes:
            made = self._made.get(id(route))
            if made is None or made[0] is not route:
                called = self._wire[route.known]
                spec = route.spec if route.spec.name == called else route.spec.model_copy(update={"name": called})
                made = self._made[id(route)] = (route, replace(route, spec=spec, aliases=route.aliases | {called}))
            offered.append(made[1])
        if len({route.spec.name for route in offered}) != len(offered):  # never: a tool is never hidden
            raise AssertionError(f"two tools of this run share a wire name: {sorted(self._wire.values())}")
        return offered

    def changed(self) -> bool:
        return False


class ApprovalMarks:
    """A servers file's `risky = [...]` (source name -> its tools' own names): those tools offered marked risky,
    so the run waits for approval before each call. Checks the run's `--risky` names too: a name that names no tool
    would let the tool meant to wait run unasked (checked by the names approval goes by, a tool's aliases)."""

    def __init__(self, marked: dict[str, frozenset[str]] | None, risky: list[str] | None):
        self.marked, self.risky = marked or {}, risky or []

    def check(self, named: list[Route], sources: Sequence[ToolSource]) -> None:
        for risky in self.risky:
            if not any(risky in route.aliases for route in named):
                raise NoSuchTool("--risky", risky, _tool_names(named))
        for source in sources:
            own = sorted(route.remote_name for route in named if route.source is source)
            unknown = sorted(self.marked.get(source.name, frozenset()) - set(own))
            if unknown:
                raise NoSuchTool(f"servers.{source.name}.risky", unknown[0], own, f"server {source.name}")

    def offer(self, routes: list[Route]) -> list[Route]:
        if not self.marked:
            return routes
        return [
            self._marked(route) if route.remote_name in self.marked.get(route.source.name, ()) else route
            for route in routes
        ]

    def changed(self) -> bool:
        return False

    @staticmethod
    def _marked(route: Route) -> Route:
        policy = route.spec.policy.model_copy(update={"risky": True})
        return replace(route, spec=route.spec.model_copy(update={"policy": policy}))
