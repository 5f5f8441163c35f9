"""A tool server's question to a person (MCP elicitation, form or URL mode) and the person's answer, as the client
saves them on a paused call: the seam between a tool source that heard the question and the run that waits."""

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

Action = Literal["accept", "decline", "cancel"]
Era = Literal["2026-07-28", "handshake", "task"]
"""How the answer travels: on the retried call (2026-07-28 `inputResponses`, handshake-era replay) or, for a call
running as an MCP task, in a `tasks/update` to that task (`InputWanted.task_id`)."""


class InputAnswer(BaseModel):
    """What a person (or an `on_elicit` callback) answered: MCP's ElicitResult, and who answered."""

    model_config = ConfigDict(frozen=True)

    action: Action
    content: dict[str, Any] | None = None
    """The form's values (accept in form mode only)."""
    by: str | None = None
    """Who answered (`toolwire answer --as NAME`, default the OS user); None for an `on_elicit` callback."""

    def wire(self) -> dict[str, Any]:
        """The ElicitResult a server gets."""
        return {"action": self.action, **({"content": self.content} if self.content is not None else {})}


class InputWanted(BaseModel):
    """One question a tool asked while it ran, with what is needed to send the answer on the retried call."""

    model_config = ConfigDict(frozen=True)

    key: str
    """The server's key for the question (2026-07-28 and task `inputRequests`); in the handshake era its number in
    the call."""
    mode: Literal["form", "url"]
    message: str
    requested_schema: dict[str, Any] | None = None
    """Form mode: the JSON schema the answer's content must fit."""
    url: str | None = None
    """URL mode: where the person goes (the answer is then accept, decline or cancel)."""
    era: Era
    request_state: str | None = None
    """2026-07-28: the server's opaque (sealed) `requestState`, echoed verbatim on the retried call."""
    task_id: str | None = None
    """Era "task": the task that asks (the call's task, followed again on resume and answered with `tasks/update`)."""
    earlier: list[InputAnswer] = []
    """Handshake era: the answers to the questions this call asked before this one, replayed in order when the call
    is sent again (the server asks them again: a handshake-era tool runs again from its start)."""


CALL_TAG_META = "io.toolwire/call"
"""tools/call `_meta` key a toolwire client tags a call with; a toolwire server echoes it in the `_meta` of a
handshake-era `elicitation/create`, so the client knows which of its calls in flight asks."""


OnElicit = Callable[[InputWanted], Awaitable[InputAnswer]]
"""Answers a tool's question at once, instead of pausing the run (the Python API's `on_elicit`)."""
