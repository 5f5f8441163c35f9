"""A ToolSource is one place tools live: an MCP server over stdio or HTTP, or an in-process registry."""

from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

import mcp_types as types

from toolwire_shared.results import ToolResult
from toolwire_shared.tools import ToolSpec


@dataclass
class TransportInfo:
    """What the execute_tool span says of the connection (MCP semantic conventions)."""

    transport: str
    """network.transport: 'pipe' for stdio, 'tcp' for HTTP, 'inproc' for in-process."""
    protocol_version: str | None = None
    session_id: str | None = None
    server_address: str | None = None
    server_port: int | None = None


class ToolSource(Protocol):
    name: str
    times_out_itself: bool
    """True when `call` itself ends at `timeout_s` in this event loop (in-process tools: the server's own timeout
    scope); the ToolBox then adds no backstop scope of its own. False for anything across a process boundary."""
    checks_output: bool
    """True when every structured result was already checked against the tool's output schema before it came back
    (this process's own registry dispatch, which derived that schema): the ToolBox then does not check it again."""

    async def start(self) -> None: ...

    async def aclose(self) -> None: ...

    async def list_tools(self) -> list[ToolSpec]: ...

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        call_id: str,
        timeout_s: float,
        idempotency_key: str | None,
        on_progress: "ProgressFn | None" = None,
    ) -> ToolResult:
        """Run one call. Tool failures come back as error results; transport failures raise ToolTransportError.
        `on_progress` gets the tool's progress reports (MCP notifications/progress) while the call runs."""
        ...

    def transport_info(self) -> TransportInfo: ...


class ProgressFn(Protocol):
    """Gets one `notifications/progress` of a running call: progress, total (None: unknown), message."""

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None: ...


@runtime_checkable
class PromptSource(Protocol):
    """A source whose server also offers prompts (McpSource, RegistrySource): what skills are made of."""

    name: str

    async def list_prompts(self) -> list[types.Prompt]: ...

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> types.GetPromptResult:
        """The prompt's messages; a server's refusal raises ServerRequestFailed with its readable reason."""
        ...


class ServerRequestFailed(Exception):
    """A tool server answered a prompts/ or resources/ request with an error; the message says which and why,
    `code` is the JSON-RPC error code."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


class ToolTransportError(Exception):
    """The call may not have reached the tool, or its answer was lost (server died, connection dropped)."""


StartFailure = Literal["no_command", "exited", "unreachable", "refused", "not_found", "timeout", "failed"]


class ToolServerFailed(Exception):
    """A tool server could not be started or reached at the start of a run. `kind` says which way, `said` is the
    server's own error line (a stdio server's stderr) or the HTTP status line, `target` the command line or URL."""

    def __init__(self, server: str, target: str, kind: StartFailure, reason: str, said: str | None = None):
        self.server, self.target, self.kind, self.reason, self.said = server, target, kind, reason, said
        super().__init__(f"tool server '{server}' ({target}) {reason}" + (f": {said}" if said else ""))
