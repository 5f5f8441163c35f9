"""One tools/call as the call pipeline carries it (tools/pipeline.py): who calls what with which arguments, and what
its way in brought along (the session, progress and logging, the asker, a task's own context). Every path into the
pipeline makes one: the SDK handler, the stdio and HTTP fast paths, the in-process RegistrySource, a task."""

from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass
from typing import Any, Protocol

import mcp_types as types
from pydantic import BaseModel

from toolwire_server.auth.access import Grant
from toolwire_server.functions.context import LogFn, ProgressFn, ToolContext
from toolwire_server.functions.elicit import Asker
from toolwire_server.functions.results import TextAnswer
from toolwire_server.tools.registry import RegisteredTool, Registry

Answer = types.CallToolResult | TextAnswer
"""What a call ends with: a TextAnswer is a one-text-block result not built yet (its `call_result()` is the
CallToolResult); an in-process caller reads it directly."""


@dataclass(slots=True)
class CallRequest:
    """One call. The stages fill `tool` (the grant stage) and `validated` (the argument stage) on the way in."""

    registry: Registry
    grant: Grant
    name: str
    arguments: dict[str, Any] | None
    _: KW_ONLY
    max_result_chars: int
    idempotency_key: str | None = None
    timeout_s: float | None = None
    """Narrows the tool's own timeout (a client's deadline); never widens it."""
    session: Any = None
    request_id: Any = None
    progress: ProgressFn | None = None
    send_log: LogFn | None = None
    asker: Asker | None = None
    """How the tool's questions reach this call's client (functions/elicit.py); None: the context's default."""
    context: ToolContext | None = None
    """A context made by the way in (a task's: its progress and questions go to the task store); else one is made
    from the fields above for a tool that reads one."""
    admitted: Callable[[], Awaitable[None]] | None = None
    """Called once the call passed its limits and its arguments, before it waits for a slot: a task is stored there
    (tasks/engine.py), so a refused call makes no task."""
    raise_protocol_errors: bool = False
    """A task: an MCPError the tool raised goes up (the task's `failed` status), not into an error result."""
    tool: RegisteredTool | None = None
    validated: BaseModel | None = None


Chain = Callable[[CallRequest], Awaitable[Answer]]
"""The rest of the pipeline from one stage on."""


class Stage(Protocol):
    """One step of the pipeline: do its part, and call `call_next` (the rest) or answer without it. A coroutine, or
    a plain call returning the rest's awaitable (a stage with nothing to do after the rest)."""

    def __call__(self, request: CallRequest, call_next: Chain) -> Awaitable[Answer]: ...
