"""The outcome of one tool call as the loop records it and the model reads it."""

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

ErrorKind = Literal[
    "unknown_tool",
    "bad_arguments",
    "tool_failed",
    "timeout",
    "refused",
    "rejected",
    "blocked",
    "transport",
    "outcome_unknown",
]


class ToolResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    call_id: str
    name: str
    content: str
    is_error: bool = False
    error_kind: ErrorKind | None = None
    truncated: bool = False
    duration_s: float = 0.0
    started_at: datetime | None = None
    """When the call was sent (the waterfall places parallel calls by it); None when the caller did not record it."""
    attempts: int = 1
    """How many times it was sent (idempotent retries); the waterfall marks calls sent more than once."""
