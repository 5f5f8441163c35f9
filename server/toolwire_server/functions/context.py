"""What a running tool may know about its call: who asked, the idempotency key, a way to report progress, and a way
to ask the person behind the client a question (elicit.py)."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types

from toolwire_server.functions import needs
from toolwire_server.functions.elicit import Asker, AskFn, Elicited, NoOneToAsk, form, url

ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]
LogFn = Callable[[str, Any], Awaitable[None]]


@dataclass(frozen=True)
class ToolContext:
    """Injected into a tool function that declares a parameter annotated `ToolContext`. In a worker process
    (isolation="process") it carries tool, agent, idempotency key and request id, and relays progress and log
    entries over the worker's pipe; `session` is None there (no server-to-client requests from a worker)."""

    tool: str
    agent: str | None = None
    idempotency_key: str | None = None
    session: Any = None
    """The SDK's ServerSession, for server-to-client requests (sampling, elicitation) on legacy connections."""
    request_id: Any = None
    progress_fn: ProgressFn | None = field(default=None, repr=False)
    log_fn: LogFn | None = field(default=None, repr=False)
    ask_fn: AskFn | None = field(default=None, repr=False)
    """Set when the call runs as a task (see AskFn; `asker` then asks through it); None otherwise."""
    asker: Asker = field(
        default=NoOneToAsk("no client can be asked on this call (the tool runs in-process)"), repr=False
    )
    """How a question reaches the client of this call (elicit.py): its era's way, or a readable refusal."""

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send `notifications/progress` when the caller asked for progress; a no-op otherwise."""
        if self.progress_fn is not None:
            await self.progress_fn(progress, total, message)

    async def log(self, level: str, data: Any) -> None:
        """Send a `notifications/message` log entry to the client (if it opted in)."""
        if self.log_fn is not None:
            await self.log_fn(level, data)

    def require_client(self, required: types.ClientCapabilities) -> None:
        """Refuse this call (error -32021, needs.py) unless its client declared every capability in `required`."""
        needs.check(self.asker.capabilities, required)

    async def elicit(self, message: str, schema: dict[str, Any]) -> Elicited:
        """Ask the person for a form's values (`schema`: a flat JSON object schema of primitive properties).
        Raises ElicitationUnavailable when this call's client cannot answer; otherwise never fails: a decline,
        a cancel or content that does not fit the schema come back as an `Elicited` saying so."""
        return await self.asker.ask(form(message, schema))

    async def elicit_url(self, message: str, address: str) -> Elicited:
        """Send the person to `address` (a login, a payment): `accepted` means they agreed to go, not that they did
        what the page asks; the tool checks that itself."""
        return await self.asker.ask(url(message, address))
