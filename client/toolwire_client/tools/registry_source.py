"""In-process tools: a toolwire_server Registry in this process, called through the server's own dispatch
(`toolwire_server.execution.call_tool`), so validation, timeouts and error results are the ones stdio and HTTP
callers get, with no transport in between."""

import time
from typing import Any

from toolwire_client.tools.source import ProgressFn, TransportInfo
from toolwire_server.access import ALL_TOOLS, Grant
from toolwire_server.execution import call_tool
from toolwire_server.limits import ServerLimits
from toolwire_server.registry import Registry
from toolwire_shared.results import ToolResult, from_call_result
from toolwire_shared.tools import ToolSpec


class RegistrySource:
    """Implements ToolSource over a Registry; `grant` narrows what this caller may see and call."""

    times_out_itself = True

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
        self._info = TransportInfo(transport="inproc")

    async def start(self) -> None:
        return None

    async def aclose(self) -> None:
        return None

    async def list_tools(self) -> list[ToolSpec]:
        return [t.spec().model_copy(update={"source": self.name}) for t in self.registry if self.grant.allows(t.name)]

    def transport_info(self) -> TransportInfo:
        return self._info

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        call_id: str,
        timeout_s: float,
        idempotency_key: str | None,
        on_progress: ProgressFn | None = None,
    ) -> ToolResult:
        started = time.perf_counter()
        result = await call_tool(
            self.registry,
            self.grant,
            name,
            arguments,
            max_result_chars=self.limits.max_result_chars,
            idempotency_key=idempotency_key,
            timeout_s=timeout_s,
            progress=on_progress,
        )
        return from_call_result(call_id, name, result, since=started)
