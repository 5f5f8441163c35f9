"""In-process tools: a toolwire_server Registry in this process, called through the server's own call pipeline
(`toolwire_server.tools.pipeline.run`), so grants, limits, the audit, validation, timeouts and error results are the
ones stdio and HTTP callers get, with no transport in between."""

import time

import mcp_types as types
from mcp.shared.exceptions import MCPError

from toolwire_client import texts
from toolwire_client.tools.source import ServerRequestFailed, ToolRequest, ToolSource
from toolwire_server.auth.access import ALL_TOOLS, Grant
from toolwire_server.functions.results import TextAnswer
from toolwire_server.limits import ServerLimits
from toolwire_server.tools.pipeline import run
from toolwire_server.tools.registry import Registry
from toolwire_server.tools.request import CallRequest
from toolwire_shared import errors
from toolwire_shared.results import ToolResult, from_call_result
from toolwire_shared.tools import ToolSpec


class RegistrySource(ToolSource):
    """A ToolSource over a Registry; `grant` narrows what this caller may see and call."""

    times_out_itself = True
    checks_output = True  # the server's own dispatch checked it
    keeps_arguments = True  # the pipeline validates and audits them, and never changes the dict
    offers_prompts = offers_resources = True

    def __init__(
        self,
        registry: Registry,
        *,
        name: str | None = None,
        grant: Grant = ALL_TOOLS,
        limits: ServerLimits | None = None,
    ):
        self.registry, self.name, self.grant = registry, name or registry.name, grant
        self.limits = limits or ServerLimits()

    async def list_tools(self) -> list[ToolSpec]:
        return [t.spec().model_copy(update={"source": self.name}) for t in self.registry if self.grant.allows(t.name)]

    async def call(self, request: ToolRequest) -> ToolResult:
        started = time.perf_counter()
        call = request.call
        answer = await run(
            CallRequest(
                self.registry,
                self.grant,
                call.name,
                call.arguments,
                max_result_chars=self.limits.max_result_chars,
                idempotency_key=request.idempotency_key,
                timeout_s=request.timeout_s,
                progress=request.on_progress,
            )
        )
        if isinstance(answer, TextAnswer):  # made at once, with when the ToolBox sent it: no MCP result, no copy
            took = time.perf_counter() - started
            return ToolResult(
                call_id=call.id,
                name=call.name,
                content=answer.text,
                duration_s=took,
                started_at=request.sent_at,
                structured=answer.structured,
            )
        return from_call_result(call.id, call.name, answer, since=started)

    # ---- prompts and resources: the registry's own, within the grant, refused as McpSource refuses them ----
    # (the server's rules, catalog.py: the grant's patterns match prompt names and resource URIs; refused or
    # unknown, the same error)
    async def list_prompts(self) -> list[types.Prompt]:
        return [self.registry.prompts[name].mcp_prompt() for name in self._prompts()]

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> types.GetPromptResult:
        prompt = self.registry.prompts.get(name)
        try:
            if prompt is None or not self.grant.allows(name):
                raise MCPError(code=types.INVALID_PARAMS, message=errors.unknown_prompt(name, self._prompts()))
            return await prompt.get(arguments)
        except MCPError as exc:
            raise self._refused("prompts/get", exc) from exc

    async def list_resources(self) -> list[types.Resource]:
        static = self.registry.resources.static
        return [resource.mcp_resource() for uri, resource in static.items() if self.grant.allows(uri)]

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        resources = self.registry.resources
        try:
            if not (self.grant.allows_uri(uri) and resources.knows(uri)):
                known = [u for u in resources.static if self.grant.allows(u)]
                known += [str(t.template) for t in resources.templates if self.grant.allows(str(t.template))]
                raise MCPError(code=types.INVALID_PARAMS, message=errors.unknown_resource(uri, known))
            return await resources.read(uri)
        except MCPError as exc:
            raise self._refused("resources/read", exc) from exc

    def _prompts(self) -> list[str]:
        return [name for name in self.registry.prompts if self.grant.allows(name)]

    def _refused(self, method: str, exc: MCPError) -> ServerRequestFailed:
        """The server's JSON-RPC error in the words McpSource gives it."""
        return ServerRequestFailed(texts.server_request_failed(self.name, method, exc.error.message), exc.error.code)
