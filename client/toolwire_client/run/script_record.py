"""A code-mode script's run, beside its steps: what it takes to resume the script where it stopped (the sandbox's
snapshot at its last batch of tool calls) in this process or another (tools/code_mode/)."""

from pydantic import BaseModel, Field


class ScriptRecord(BaseModel):
    """Saved with the script's run before any call of a batch is sent, so a crash or a pause for a person resumes
    the script at that batch: each call of it answered from the run's record, or run as the pending-call machine
    says (run/pending.py)."""

    code: str
    snapshot: str | None = None
    """Base64 of the interpreter's state when every task of the script waited on the last batch's calls; None
    before the first call (the script starts from its code)."""
    calls: dict[int, str] = Field(default_factory=dict)
    """The interpreter's id of each call of the last batch -> that call's id in the run."""
    printed: str = ""
    """What the script printed before the snapshot (the interpreter's output is not part of it)."""
