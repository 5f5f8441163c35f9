"""An upstream's resources and resource templates, re-served under a namespace: its URI `demo://x` is `own+demo://x`
here (the upstream's name, `_` written `-` and `mcp-` before a leading digit, since a URI scheme is letters, digits,
`+`, `-` and `.`, starting with a letter; then `+`; then its URI, unchanged). That is still an absolute URI (scheme
`own+demo`), so a client reads it without knowing there is a gateway, and it is the form agentgateway and Envoy AI
Gateway use. A URI is routed by its start (the registry's `Resources.sources`), after it was put in canonical form
and checked against the caller's grant (catalog.py), so the upstream gets the URI the grant allowed: a `..` or an
escape cannot reach another upstream or the host's resources.

The upstream's URIs in what it returns go under the namespace too (read contents; resource links and embedded
resources in its tool results and prompts), so what a tool points to can be read here. While the upstream is down
its listing stays and a read is a JSON-RPC error saying when to try again."""

import logging

import anyio
import httpx2
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import CONNECTION_CLOSED

from toolwire_server import texts
from toolwire_server.upstreams.connection import Upstream

log = logging.getLogger("toolwire.server")

MAX_WATCHED = 1000
"""Subscriptions at one upstream at most: they are never taken back while the server runs (one serves every
agent), so agents subscribing to URI after URI must not grow them without end. A slot is taken only once the
upstream accepted the subscription (a made-up URI it refuses takes none)."""
MAX_WATCHED_PER_AGENT = 100
"""Of those, the URIs one agent may have subscribed to (as `max_listen_streams_per_agent` caps its listen streams):
one agent cannot take every slot and leave the other agents none."""


def namespace_of(name: str) -> str:
    """The start of every URI of upstream `name` here (see the module docstring)."""
    scheme = name.replace("_", "-")
    return (scheme if scheme[0].isalpha() else "mcp-" + scheme) + "+"


class UpstreamResources:
    """One upstream's resources in a registry (a `ResourceSource`): the last listing, and reads sent on."""

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        self.namespace = namespace_of(upstream.endpoint.name)
        self._resources: list[types.Resource] = []
        self._templates: list[types.ResourceTemplate] = []
        self._held: dict[str, set[str]] = {}
        """Agent -> the upstream URIs it subscribed to (or is subscribing to now): its share of the slots."""
        self._pending: set[str] = set()
        """URIs being subscribed to now: they hold a slot until the upstream answers."""

    def put(self, resources: list[types.Resource], templates: list[types.ResourceTemplate]) -> bool:
        """The upstream's listing (first, or after a list_changed), under the namespace: whether it changed."""
        listed = [r.model_copy(update={"uri": self.local(r.uri)}) for r in resources]
        shaped = [t.model_copy(update={"uri_template": self.local(t.uri_template)}) for t in templates]
        if (listed, shaped) == (self._resources, self._templates):
            return False
        self._resources, self._templates = listed, shaped
        return True

    def listed(self) -> list[types.Resource]:
        return list(self._resources)

    def listed_templates(self) -> list[types.ResourceTemplate]:
        return list(self._templates)

    async def subscribe(self, uri: str, agent: str) -> None:
        """`agent` subscribed to `uri` here: subscribe at the upstream, whose updates `updated` passes on. Refused
        (and nothing held) when the agent holds `MAX_WATCHED_PER_AGENT` URIs here, when every slot is taken, when
        the upstream refuses, or while it is down."""
        remote = uri.removeprefix(self.namespace)
        held = self._held.setdefault(agent, set())
        held &= self.upstream.watched | self._pending  # what the upstream forgot since (a reconnection) is free
        if remote in held:
            return
        if self.upstream.session is None:
            raise MCPError(code=types.INTERNAL_ERROR, message=self.upstream.restarting())
        name = self.upstream.endpoint.name
        if len(held) >= MAX_WATCHED_PER_AGENT:
            raise MCPError(code=types.INTERNAL_ERROR, message=texts.too_many_watched(agent, name, len(held)))
        taken = self.upstream.watched | self._pending
        if remote not in taken and len(taken) >= MAX_WATCHED:
            raise MCPError(code=types.INTERNAL_ERROR, message=texts.all_watched(name, MAX_WATCHED))
        held.add(remote)
        self._pending.add(remote)
        try:
            if not await self.upstream.watch(remote):
                held.discard(remote)  # it offers no subscriptions: nothing is held (nor will an update come)
        except MCPError as exc:
            held.discard(remote)
            if exc.error.code != CONNECTION_CLOSED:
                raise self._passed_on(exc) from None
            self.upstream.lost()
            raise MCPError(code=types.INTERNAL_ERROR, message=self.upstream.restarting()) from None
        finally:
            self._pending.discard(remote)

    async def complete(self, uri_template: str, variable: str, partial: str) -> types.CompleteResult:
        session = self.upstream.session
        if session is None:
            raise MCPError(code=types.INTERNAL_ERROR, message=self.upstream.restarting())
        ref = types.ResourceTemplateReference(uri=uri_template.removeprefix(self.namespace))
        try:
            with self.upstream.busy():
                return await session.complete(ref, {"name": variable, "value": partial})
        except MCPError as exc:
            raise self._passed_on(exc) from None

    def local(self, uri: str) -> str:
        return self.namespace + uri

    async def read(self, uri: str) -> types.ReadResourceResult:
        session = self.upstream.session
        if session is None:
            raise MCPError(code=types.INTERNAL_ERROR, message=self.upstream.restarting())
        name = self.upstream.endpoint.name
        try:
            with self.upstream.busy():
                result = await session.read_resource(uri.removeprefix(self.namespace))
        except MCPError as exc:
            if exc.error.code != CONNECTION_CLOSED:  # the upstream's own answer (unknown URI, ...), passed on
                raise self._passed_on(exc) from None
        except (OSError, httpx2.HTTPError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            log.warning("upstream %s: reading %s broke the connection: %s", name, uri, exc)
        else:
            contents = [c.model_copy(update={"uri": self.local(c.uri)}) for c in result.contents]
            return result.model_copy(update={"contents": contents})
        self.upstream.lost()
        raise MCPError(code=types.INTERNAL_ERROR, message=self.upstream.restarting())

    def _passed_on(self, exc: MCPError) -> MCPError:
        return MCPError(code=exc.error.code, message=f"upstream {self.upstream.endpoint.name}: {exc.error.message}")

    def localised(self, blocks: list[types.ContentBlock]) -> list[types.ContentBlock]:
        """Content the upstream returned, its resource links and embedded resources under the namespace."""
        return [self._localised(block) for block in blocks]

    def _localised(self, block: types.ContentBlock) -> types.ContentBlock:
        if isinstance(block, types.ResourceLink):
            return block.model_copy(update={"uri": self.local(block.uri)})
        if isinstance(block, types.EmbeddedResource):
            inner = block.resource.model_copy(update={"uri": self.local(block.resource.uri)})
            return block.model_copy(update={"resource": inner})
        return block
