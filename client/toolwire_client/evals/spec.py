"""The eval file: tasks, the model each runs on, the tool servers, how the answer is checked, the expected path."""

import json
import sys
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from toolwire_client.config import ServerSpec
from toolwire_client.evals.checks import CHECK_EXAMPLE, AnswerCheck, PathExpectation
from toolwire_client.strategies.delegation import Delegation
from toolwire_client.strategies.plan import Planning
from toolwire_client.strategies.review import Review
from toolwire_client.strategies.workflow import Workflow

EXAMPLE = f"""[[servers]]
command = ["python", "examples/support_tools.py"]

[[tasks]]
name = "gst-total"
task = "What does order A123 cost in total with 18% GST?"
model = "scripted:recovers"
{CHECK_EXAMPLE}
expect = {{ tools = ["get_order", "calculator"], max_steps = 6, max_cost_usd = 0.05 }}"""


class EvalFileError(ValueError):
    """The eval file is unreadable or malformed; the message says where and shows a correct file."""


class EvalTask(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    task: str
    model: str | None = None
    """A model spec as `toolwire run --model` takes it: 'scripted:recovers', 'anthropic:claude-sonnet-4-5', ..."""
    check: AnswerCheck
    expect: PathExpectation | None = None
    system: str | None = None
    max_steps: int | None = None
    risky_tools: list[str] | None = None
    approve: bool = False
    """Approve every risky call it pauses for (as a person saying yes), then resume; else pausing fails the task."""
    delegate: Delegation | None = None
    """Offer the delegate tool (sub-agents), as `toolwire run --delegate`: `delegate = {}` for the defaults."""
    skills: bool = False
    """Offer load_skill with the servers' skills (MCP prompts named skill.*), as `toolwire run --skills`."""
    usage: str | None = None
    """Optional 'module:function' usage_fn for scripted models (a seed's token arithmetic)."""
    review: Review | None = None
    """Reflection, as `run --review`: review = { criteria = ["..."], max_retries = 1 }."""
    plan: Planning | None = None
    """Plan-and-execute, as `run --plan`: plan = { max_replans = 1 }."""
    workflow: Workflow | None = None
    """A coded path: [[tasks.workflow.steps]] tables with name, instruction and optionally tools."""

    @model_validator(mode="after")
    def _one_path(self) -> "EvalTask":
        if self.plan is not None and self.workflow is not None:
            raise ValueError(f"task {self.name!r} sets both plan and workflow; a run follows one of them")
        return self


class EvalFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    """The default model for tasks that name none."""
    servers: list[ServerSpec] = Field(default_factory=list)
    max_steps: int = 12
    system: str | None = None
    tasks: list[EvalTask]

    @model_validator(mode="after")
    def _complete(self) -> "EvalFile":
        if not self.tasks:
            raise ValueError("the file lists no [[tasks]]")
        names = [t.name for t in self.tasks]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"task names must be unique; repeated: {duplicates}")
        missing = [t.name for t in self.tasks if (t.model or self.model) is None]
        if missing:
            raise ValueError(f'tasks {missing} name no model and the file sets no default model = "..."')
        return self

    def model_for(self, task: EvalTask) -> str:
        spec = task.model or self.model
        assert spec is not None
        return spec


def load_eval_file(path: str | Path) -> EvalFile:
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise EvalFileError(f"cannot read eval file {file}: {exc.strerror or exc}") from exc
    data = _parse(file, text)
    try:
        evals = EvalFile.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(_problem(err) for err in exc.errors())
        raise EvalFileError(f"{file}: {problems}.\nA correct eval file looks like:\n{EXAMPLE}") from exc
    here = str(file.resolve().parent)
    values = {"python": sys.executable, "here": here}
    evals.servers = [
        server.model_copy(update={"cwd": str(Path(here, server.cwd)) if server.cwd else here}).expand(values)
        for server in evals.servers
    ]
    return evals


def _parse(file: Path, text: str) -> Any:
    try:
        if file.suffix.lower() == ".json":
            return json.loads(text)
        return tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        kind = "JSON" if file.suffix.lower() == ".json" else "TOML"
        raise EvalFileError(f"{file} is not valid {kind} ({exc}).\nA correct eval file looks like:\n{EXAMPLE}") from exc


def _problem(err: Any) -> str:
    where = ".".join(str(p) for p in err.get("loc", ())) or "file"
    msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    return f"{where}: {msg}"
