"""Code mode, the option: `RunConfig.code_mode` offers the run a `run_code` tool whose script calls the run's tools
as Python functions, run in the Monty sandbox (the layer, the tool and the sandbox: tools/code_mode/)."""

from pydantic import BaseModel, Field


class CodeMode(BaseModel):
    """What a script may do. Each limit ends the script with a readable error the model gets as run_code's result."""

    only: bool = False
    """Offer only `run_code`: the other tools are callable from a script, not by the model directly."""
    max_script_s: float = Field(default=10.0, gt=0)
    """Seconds the script itself may compute (the sandbox's clock; time waiting on a tool call does not count)."""
    max_memory_mb: int = Field(default=64, ge=1)
    """The sandbox's heap."""
    max_tool_calls: int = Field(default=200, ge=1)
    """Tool calls one script may make."""
    max_output_chars: int = Field(default=20_000, ge=100)
    """What the script may print, and its result as the model reads it (longer is cut, with a note)."""
