"""An upstream's tools, prompts and resources in the registry: each tool a RegisteredTool named `<prefix><its
name>` whose function sends the call to the upstream, so the one call path (grants, limits, audit, timeout, the
server's span with the SDK's client span under it) covers it as it covers a local tool. While the upstream is down
its tools stay listed and a call is answered `limited` with the wait (it did not run: a client may send it again
then). Its prompts are RegisteredPrompts of the same names whose `get` and argument completion ask the upstream (a
JSON-RPC error while it is down); its resources are a source of the registry's resources under a URI namespace
(resources.py)."""

import logging
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import CONNECTION_CLOSED
from pydantic import BaseModel, ConfigDict

from toolwire_server.functions.elicit import Asker
from toolwire_server.surface.changes import PromptsListChanged, ResourcesListChanged
from toolwire_server.surface.completion import Completer
from toolwire_server.surface.prompts import RegisteredPrompt
from toolwire_server.tools.registry import RegisteredTool, Registry
from toolwire_server.upstreams.connection import Endpoint, Listing, Upstream
from toolwire_server.upstreams.resources import UpstreamResources
from toolwire_shared import errors
from toolwire_shared.results import RETRY_AFTER_META, failed_call
from toolwire_shared.tools import ToolPolicy
from toolwire_shared.wire_names import wire_names

log = logging.getLogger("toolwire.server")

STARTUP_S = 10.0
"""How long a server's start waits for its upstreams' first tool lists (one that is slower joins later, with a
list_changed)."""


class UpstreamArguments(BaseModel):
    """Any arguments: the upstream validates them against its own schema (which is what clients are shown)."""

    model_config = ConfigDict(extra="allow")


@dataclass
class UpstreamTool(RegisteredTool):
    """A tool of an upstream, listed as the upstream describes it under its name here."""

    remote: types.Tool | None = None

    def mcp_tool(self) -> types.Tool:
        assert self.remote is not None
        meta = {**(self.remote.meta or {}), **self.policy.to_meta()}
        return self.remote.model_copy(update={"name": self.name, "meta": meta, "execution": None})


@dataclass
class UpstreamPrompt(RegisteredPrompt):
    """A prompt of an upstream, listed as the upstream describes it, got from it."""

    remote: types.Prompt | None = None
    mount: "UpstreamMount | None" = None

    def mcp_prompt(self) -> types.Prompt:
        assert self.remote is not None
        return self.remote.model_copy(update={"name": self.name})

    async def get(self, given: dict[str, str] | None, asker: Asker | None = None) -> types.GetPromptResult:
        """The upstream's prompt (its questions, if any, are the upstream's to ask: `asker` is not passed on)."""
        assert self.remote is not None and self.mount is not None
        return await self.mount.get_prompt(self.remote.name, given)


class UpstreamMount:
    """One `[upstreams.NAME]` entry mounted into a registry (a `Mount`)."""

    def __init__(self, registry: Registry, endpoint: Endpoint, *, prefix: str, timeout_s: float) -> None:
        self.registry, self.prefix, self.timeout_s = registry, prefix, timeout_s
        self.upstream = Upstream(endpoint, self._listed, self._updated)
        self.resources = UpstreamResources(self.upstream)
        self._names: set[str] = set()
        self._prompts: set[str] = set()
        self._serving = False

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """Keep the upstream connected while a server runs (a second server of the same registry shares it)."""
        if self._serving:
            yield
            return
        self._serving = True
        try:
            async with anyio.create_task_group() as tg:
                first = anyio.Event()
                tg.start_soon(self.upstream.supervise, first)
                with anyio.move_on_after(STARTUP_S):
                    await first.wait()
                yield
                tg.cancel_scope.cancel()
        finally:
            self._serving = False

    def local_names(self, remotes: Iterable[str]) -> dict[str, str]:
        """Each of the upstream's names -> its name here, `<prefix><name>` made valid as a client's wire names are
        (toolwire_shared/wire_names.py): one that would pass 64 characters, or clash, gets a stable hash suffix
        (never a bare cut, which would give two long names one). The prefix (at most 34 characters) stays whole."""
        remotes = list(dict.fromkeys(remotes))
        here = wire_names(self.prefix + remote for remote in remotes)
        return {remote: here[self.prefix + remote] for remote in remotes}

    def _listed(self, listing: Listing) -> None:
        self._put_tools(listing.tools)
        self._put_prompts(listing.prompts)
        if self.resources.put(listing.resources, listing.templates):
            self.registry.changes.post(ResourcesListChanged())

    def _updated(self, uri: str) -> None:
        """The upstream says a resource subscribed to changed: tell the agents (each only if its grant allows)."""
        self.registry.notify_resource_updated(self.resources.local(uri))

    def _put_prompts(self, prompts: list[types.Prompt]) -> None:
        """The upstream's prompts under the prefix, replacing the ones it listed before."""
        prompts_here = self.registry.prompts
        names = self.local_names(p.name for p in prompts)
        named = {names[p.name]: p for p in prompts}
        kept = {n: p for n, p in named.items() if n in self._prompts or n not in prompts_here}
        if {n: getattr(prompts_here.get(n), "remote", None) for n in self._prompts} == kept:
            return
        for gone in self._prompts:
            prompts_here.pop(gone, None)
        for name, remote in kept.items():
            arguments = list(remote.arguments or [])
            prompt = UpstreamPrompt(
                name, remote.description or remote.name, _unused, UpstreamArguments, arguments, self._completer(remote)
            )
            prompt.remote, prompt.mount = remote, self
            prompts_here[name] = prompt
        self._prompts = set(kept)
        self.registry.changes.post(PromptsListChanged())

    async def get_prompt(self, remote: str, given: dict[str, str] | None) -> types.GetPromptResult:
        session = self.upstream.session
        if session is None:
            raise MCPError(code=types.INTERNAL_ERROR, message=self.upstream.restarting())
        with self.upstream.busy():
            got = await session.get_prompt(remote, given)
        messages = [m.model_copy(update={"content": self.resources.localised([m.content])[0]}) for m in got.messages]
        return got.model_copy(update={"messages": messages})

    def _completer(self, remote: types.Prompt) -> Completer:
        """Values for an argument of the upstream's prompt, as the upstream completes them (its failure, or its being
        down, is the completion's readable error: surface/completion.py)."""
        ref = types.PromptReference(name=remote.name)

        async def values(argument: str, partial: str) -> list[str]:
            session = self.upstream.session
            if session is None:
                raise RuntimeError(self.upstream.restarting())
            with self.upstream.busy():
                return (await session.complete(ref, {"name": argument, "value": partial})).completion.values

        return values

    def _put_tools(self, tools: list[types.Tool]) -> None:
        """The upstream's tool list (first, or after its list_changed): put what is new or changed, drop what went."""
        seen: set[str] = set()
        names = self.local_names(remote.name for remote in tools)
        if len(set(names.values())) != len(names):  # never (wire_names): no tool of it may take another's name
            raise AssertionError(f"upstream {self.upstream.endpoint.name}: two tools would share a name: {names}")
        for remote in tools:
            name = names[remote.name]
            existing = self.registry.get(name)
            if name in seen or (existing is not None and name not in self._names):  # listed twice, or the host's
                log.warning("upstream %s: tool %r skipped: %s is taken", self.upstream.endpoint.name, remote.name, name)
                continue
            seen.add(name)
            if isinstance(existing, UpstreamTool) and existing.remote == remote:
                continue
            self.registry.put(self._tool(name, remote))
        for gone in self._names - seen:
            self.registry.remove(gone)
        self._names = seen

    def _tool(self, name: str, remote: types.Tool) -> UpstreamTool:
        async def forward(**arguments: Any) -> types.CallToolResult:
            return await self._call(name, remote.name, arguments)

        destructive = remote.annotations.destructive_hint if remote.annotations is not None else False
        return UpstreamTool(
            name=name,
            description=remote.description or f"{remote.name} (from {self.upstream.endpoint.name})",
            fn=forward,
            model=UpstreamArguments,
            schema=dict(remote.input_schema),
            # Its annotations are the upstream's word: trusted only where they ask for more care (an approval).
            policy=ToolPolicy(timeout_s=self.timeout_s, risky=remote.annotations is not None and bool(destructive)),
            injected={},
            is_async=True,
            remote=remote,
        )

    async def _call(self, name: str, remote: str, arguments: dict[str, Any]) -> types.CallToolResult:
        session = self.upstream.session
        if session is None:
            return self._restarting()
        try:
            with self.upstream.busy():
                result = await session.call_tool(remote, arguments)
            return result.model_copy(update={"content": self.resources.localised(result.content)})
        except MCPError as exc:
            if exc.error.code != CONNECTION_CLOSED:
                return failed_call("tool_failed", errors.tool_failed(name, exc.error.message))
        except (OSError, httpx2.HTTPError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            log.warning("upstream %s: the call of %s broke the connection: %s", self.upstream.endpoint.name, name, exc)
        self.upstream.lost()
        # It may have run before the connection broke: say so, rather than invite a second run.
        text = f"{self.upstream.restarting()} (it stopped during this call of {name}, which may have run)"
        return failed_call("outcome_unknown", text)

    def _restarting(self) -> types.CallToolResult:
        """The call never left: `limited`, with the wait in `_meta`, is safe to send again after it."""
        result = failed_call("limited", self.upstream.restarting())
        return result.model_copy(update={"meta": {**(result.meta or {}), RETRY_AFTER_META: self.upstream.retry_in()}})


def _unused() -> None:
    """An upstream prompt's `fn`: its `get` asks the upstream instead."""
