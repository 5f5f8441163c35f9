"""Tool search (deferred loading), a layer of the ToolBox (tools/tool_layers.py): past a threshold the model is
offered only the tools kept loaded (`--keep-tool`) and `search_tools`; a search ranks the run's tools (BM25,
toolwire_shared/tool_index.py) and loads its matches, whose full definitions are offered from the next request on.

Every tool the run may call stays routed: a tool not loaded yet is routed to a gate that loads it and answers with
its definition and "call it again" (never "unknown tool"). The catalog is what the layers below offer (the
`--allow` filter's), so a search never shows a tool the run may not call. Natively (a provider with its own tool
search: Anthropic's, OpenAI Responses' on gpt-5.4 and later), the deferred tools are offered marked `deferred` and
the provider searches them; the tools its replies say it loaded (ModelReply.found_tools) are recorded here by `load`,
as this layer's own loads are."""

import fnmatch
import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar

from toolwire_client.config import ToolSearchMode
from toolwire_client.tools.source import ToolRequest, ToolSource
from toolwire_client.tools.tool_layers import NoSuchTool, Route
from toolwire_shared.results import ToolResult, failed
from toolwire_shared.tool_index import SEARCH_SPEC, SEARCH_TOOL, BadSearch, ToolIndex, one_line, search_answer
from toolwire_shared.tool_index import search_arguments as parsed_search
from toolwire_shared.tools import ToolPolicy, ToolSpec
from toolwire_shared.wire_names import wire_names

TOOL_SEARCH_MODES: tuple[ToolSearchMode, ...] = ("auto", "on", "off")
AUTO_TOOLS = 30
"""`auto` turns tool search on past this many tools..."""
AUTO_TOKENS = 8_000
"""...or past this many tokens of tool definitions (about four characters a token, as the budgets estimate)."""
THEN = "Their full definitions are offered from your next turn on: call them by name then."


def definition_tokens(specs: Sequence[ToolSpec]) -> int:
    """About how many tokens these definitions cost a request (four characters a token, as budgets estimate)."""
    return sum(len(spec.name) + len(spec.description) + len(json.dumps(spec.input_schema)) for spec in specs) // 4


class ToolSearch:
    """The layer. `loaded`: the wire names of the tools searched out or called so far, in the order they were loaded
    (saved with each step, restored on resume by `load`); `changed()`: a load since the ToolBox last routed."""

    def __init__(
        self, mode: ToolSearchMode = "auto", keep: Sequence[str] = (), native: bool = False, own: Sequence[str] = ()
    ):
        """`keep`: the `--keep-tool` globs (each must match a tool); `own`: the client's own tools (delegate,
        load_skill, read_resource), always offered in full; `native`: the provider searches (the model's
        `native_tool_search`)."""
        self.mode, self.keep, self.native = mode, list(keep), native
        self._always = [*keep, *own]
        self.loaded: list[str] = []
        self._loaded_since_offer = False
        self.active = False
        self._index: ToolIndex | None = None
        self._indexed: tuple[int, ...] = ()
        self._specs: dict[str, ToolSpec] = {}
        """Wire name -> the definition of every tool of the catalog, named by its wire name."""
        self._wire: dict[str, str] = {}
        """Known name -> wire name of every tool of the catalog."""
        self._deferred: dict[str, Route] = {}
        """Known name -> the tool's route while it is not loaded."""
        self._kept: set[str] = set()
        """The known names of the tools always offered (`--keep-tool`, the client's own)."""
        self._searcher = _Searcher(self)
        self._gate = _LoadGate(self)

    # ---- the layer ------------------------------------------------------------------------------------------
    def check(self, named: list[Route], sources: Sequence[ToolSource]) -> None:
        for pattern in self.keep:
            if not any(fnmatch.fnmatchcase(n, pattern) for route in named for n in route.aliases):
                raise NoSuchTool("--keep-tool", pattern, sorted({route.known for route in named}))

    def changed(self) -> bool:
        return self._loaded_since_offer

    def offer(self, routes: list[Route]) -> list[Route]:
        self._loaded_since_offer = False
        self.active = self.mode == "on" or (
            self.mode == "auto"
            and (len(routes) > AUTO_TOOLS or definition_tokens([r.spec for r in routes]) > AUTO_TOKENS)
        )
        if not self.active:
            return routes
        self._index_catalog(routes)
        # natively the provider loads what it found from its own references in the history: the offer stays the same
        loaded = set() if self.native else set(self.loaded)
        offered = [
            route if route.known in self._kept or self._wire[route.known] in loaded else self._deferred[route.known]
            for route in routes
        ]
        if not self.native:
            offered.append(Route(self._searcher, SEARCH_TOOL, SEARCH_SPEC, SEARCH_TOOL, frozenset({SEARCH_TOOL})))
        return offered

    def _always_offered(self, route: Route) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self._always for name in route.aliases)

    def _index_catalog(self, routes: list[Route]) -> None:
        """Index the catalog by the names the model calls its tools by, and make each tool's route while it is not
        loaded; again only when the catalog changed (a load routes again, and finds both made)."""
        key = tuple(id(route.spec) for route in routes)
        if key == self._indexed and self._index is not None:
            return
        wire = wire_names([*(route.known for route in routes), *(() if self.native else (SEARCH_TOOL,))])
        specs = [route.spec.model_copy(update={"name": wire[route.known]}) for route in routes]
        self._specs = {spec.name: spec for spec in specs}
        self._wire = wire
        self._kept = {route.known for route in routes if self._always_offered(route)}
        self._deferred = {route.known: self._not_loaded(route, wire[route.known]) for route in routes}
        self._index, self._indexed = ToolIndex(specs), key

    def _not_loaded(self, route: Route, called: str) -> Route:
        """Natively: offered marked deferred. Else hidden, routed to the gate (loading it runs nothing, so it never
        waits for approval)."""
        if self.native:
            return replace(route, spec=route.spec.model_copy(update={"deferred": True}))
        safe = route.spec.model_copy(update={"policy": ToolPolicy()})
        gated = replace(route, source=self._gate, remote_name=called, spec=safe, offered=False, loads_only=True)
        return replace(gated, unloaded=route)

    @property
    def loading(self) -> list[str] | None:
        """The tools loaded so far, while tool search is on; None while every tool is offered."""
        return list(self.loaded) if self.active else None

    # ---- loading --------------------------------------------------------------------------------------------
    def load(self, names: Sequence[str]) -> list[str]:
        """Load these tools (wire names; unknown ones ignored): offered in full from the next request on. The
        names newly loaded."""
        new = [name for name in dict.fromkeys(names) if name not in self.loaded and name in self._specs]
        if new:
            self.loaded.extend(new)
            self._loaded_since_offer = not self.native
        return new

    def restore(self, names: Sequence[str]) -> None:
        """Loaded exactly `names` as a run starts: a resumed run's, as its last step recorded them; none for a new
        run, whatever an earlier run on this ToolBox loaded. Routed again at the next refresh when that changed."""
        kept = [name for name in dict.fromkeys(names) if name in self._specs]
        if kept != self.loaded:
            self.loaded = kept
            self._loaded_since_offer = not self.native

    @property
    def catalog(self) -> list[ToolSpec]:
        """Every tool the run may call, named as the model calls it (while tool search is on)."""
        return list(self._specs.values())

    def definition(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def search(self, query: str, limit: int) -> list[ToolSpec]:
        return self._index.search(query, limit) if self._index is not None else []


class _Searcher(ToolSource):
    """`search_tools`: the matches' names and one-line descriptions, loaded for the next request."""

    name = "tool_search"
    times_out_itself = True
    checks_output = True

    def __init__(self, layer: ToolSearch):
        self.layer = layer

    async def list_tools(self) -> list[ToolSpec]:
        return [SEARCH_SPEC]

    async def call(self, request: ToolRequest) -> ToolResult:
        call = request.call
        try:
            query, limit = parsed_search(call.arguments)
        except BadSearch as exc:
            return failed(call.id, SEARCH_TOOL, "bad_arguments", str(exc))
        found = self.layer.search(query, limit)
        self.layer.load([spec.name for spec in found])
        text = search_answer(query, [(spec.name, one_line(spec.description)) for spec in found], THEN)
        return ToolResult(call_id=call.id, name=SEARCH_TOOL, content=text)


class _LoadGate(ToolSource):
    """Where a call of a tool not loaded yet goes: it loads the tool and answers with its definition, unrun."""

    name = "tool_search"
    times_out_itself = True
    checks_output: ClassVar[bool] = True

    def __init__(self, layer: ToolSearch):
        self.layer = layer

    async def list_tools(self) -> list[ToolSpec]:
        return []

    async def call(self, request: ToolRequest) -> ToolResult:
        call = request.call  # its name here is the wire name (the gate's remote name)
        self.layer.load([call.name])
        spec = self.layer.definition(call.name)
        definition: dict[str, Any] = {"name": call.name}
        if spec is not None:
            definition = {"name": spec.name, "description": spec.description, "input_schema": spec.input_schema}
        text = (
            f"{call.name} was not loaded, so it did not run. It is loaded now; its definition:\n"
            f"{json.dumps(definition)}\nCall it again (check the arguments against the definition)."
        )
        return ToolResult(call_id=call.id, name=call.name, content=text)
