"""A ToolSource is one place tools live: an MCP server over stdio or HTTP, or an in-process registry. It gets each
call as one ToolRequest, which hands it the run that makes the call (RunContext)."""

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar, Literal, Protocol

import mcp_types as types

from toolwire_shared.elicitation import OnElicit
from toolwire_shared.messages import ToolCall
from toolwire_shared.results import ToolResult
from toolwire_shared.tools import ToolSpec

if TYPE_CHECKING:
    from toolwire_client.config import RunConfig
    from toolwire_client.models.base import Model
    from toolwire_client.run.budget import PriceFn
    from toolwire_client.run.limits import RunLimits
    from toolwire_client.run.state import RunState, SamplingRecord, StepRecord
    from toolwire_client.store.base import RunStore


@dataclass
class TransportInfo:
    """What the execute_tool span says of the connection (MCP semantic conventions)."""

    transport: str
    """network.transport: 'pipe' for stdio, 'tcp' for HTTP, 'inproc' for in-process."""
    protocol_version: str | None = None
    session_id: str | None = None
    server_address: str | None = None
    server_port: int | None = None


IN_PROCESS = TransportInfo(transport="inproc")
"""What a source in this process says of its connection (there is none)."""


class ToolSource(ABC):
    """Where tools live, and what else the source can do. `list_tools` and `call` are its own; every optional
    ability is declared here with a default, and a source that has one says so (a class attribute, or the method
    overridden), so the ToolBox, skills and read_resource ask the source and never probe it."""

    name: str
    times_out_itself: ClassVar[bool] = False
    """True when `call` itself ends at `timeout_s` in this event loop (in-process tools: the server's own timeout
    scope); the ToolBox then adds no backstop scope of its own. False for anything across a process boundary."""
    checks_output: ClassVar[bool] = False
    """True when every structured result was already checked against the tool's output schema before it came back
    (this process's own registry dispatch, which derived that schema): the ToolBox then does not check it again."""
    keeps_arguments: ClassVar[bool] = False
    """True when `call` only reads the call's arguments, never changes the dict (this process's own registry
    dispatch: validated into a model, audited as they are): the ToolBox then sends the model's call itself, not a
    copy, when the tool's name on the source is the one the model called."""
    offers_prompts: ClassVar[bool] = False
    """True when its server may offer prompts (`list_prompts`, `get_prompt`): what skills are made of."""
    offers_resources: ClassVar[bool] = False
    """True when its server may offer resources (`list_resources`, `read_resource`): what read_resource reads."""
    watches_links: ClassVar[bool] = False
    """True when it is told of the resource links other sources' results return (`linked`, after each call)."""
    instructions: str | None = None
    """The server's `instructions` (an McpSource's), joined to a new run's system prompt."""
    tools_changed: bool = False
    """Set when its tool list changed (MCP `list_changed`): the ToolBox lists it again and clears it."""

    async def start(self) -> None:
        return None

    async def aclose(self) -> None:
        return None

    @abstractmethod
    async def list_tools(self) -> list[ToolSpec]: ...

    @abstractmethod
    async def call(self, request: "ToolRequest") -> ToolResult:
        """Run one call. Tool failures come back as error results; transport failures raise ToolTransportError."""

    def transport_info(self) -> TransportInfo:
        return IN_PROCESS

    async def list_prompts(self) -> list[types.Prompt]:
        return []

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> types.GetPromptResult:
        """The prompt's messages; a server's refusal raises ServerRequestFailed with its readable reason."""
        raise ServerRequestFailed(f"{self.name} offers no prompts", types.METHOD_NOT_FOUND)

    async def list_resources(self) -> list[types.Resource]:
        return []

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        """The resource's contents; a server's refusal raises ServerRequestFailed with its readable reason."""
        raise ServerRequestFailed(f"{self.name} offers no resources", types.METHOD_NOT_FOUND)

    def linked(self, source: "ToolSource", uris: list[str]) -> None:
        """`source` returned links to `uris` (told only to a source that `watches_links`)."""
        return None


class ProgressFn(Protocol):
    """Gets one `notifications/progress` of a running call: progress, total (None: unknown), message."""

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None: ...


class ChildRuns(Protocol):
    """Sub-agents of the calling run, for the delegate tool: what it reads of the parent Agent, and a second Agent
    on the parent's model, store, hooks and prices over a view of the parent's started tools. The loop implements it
    (`loop.SubAgents`), so nothing here imports the loop."""

    @property
    def config(self) -> "RunConfig":
        """The parent's config: its delegate options, limits and name."""
        ...

    @property
    def specs(self) -> list[ToolSpec]:
        """The tools offered to the parent."""
        ...

    @property
    def store(self) -> "RunStore | None":
        """The parent's store, where its children are saved too."""
        ...

    async def start(
        self, config: "RunConfig", tools: list[str], task: str, run_id: str, parent: tuple[str, str]
    ) -> "RunState":
        """A new child run of `task` under `config`, offered only the parent's `tools`; `parent` is the parent's run
        id and the delegate call's id. Returns at its end or its first pause."""
        ...

    async def resume(self, config: "RunConfig", tools: list[str], state: "RunState") -> "RunState":
        """The child run `state` (saved before) driven on under `config`, offered only the parent's `tools`."""
        ...

    def script_calls(self, state: "RunState") -> "AbstractAsyncContextManager[ScriptTurns]":
        """Drive `state`, a code-mode script's run (a child of this run), under this process's lease on it: its
        calls go through the parent's call pipeline. A RunExit raised inside ends it (status, report) and the
        context saves it last; a pause for a person leaves it waiting."""
        ...


class ScriptTurns(Protocol):
    """A code-mode script's batches of tool calls as calls of its run (tools/code_mode/): the loop's pipeline of a
    turn's calls (hooks, approval, authorisation, pending states saved before a call is sent, concurrency)."""

    async def act(self, step: "StepRecord") -> None:
        """Run the step's calls (the last step of the script's run, its calls its last message's) and save."""

    async def settle(self) -> None:
        """On resume: answer the last step's calls left pending, as a resumed run's last turn is settled."""


@dataclass(frozen=True)
class LentModel:
    """The run's model as a tool server may borrow it (MCP sampling, tools/sampling.py): the adapter, and the limits
    and prices each request is checked and charged under, as the loop's own calls are."""

    model: "Model"
    limits: "RunLimits"
    price_fn: "PriceFn | None" = None


class SamplingLedger(Protocol):
    """The loop's record of a tool server's requests for the run's model (MCP sampling): a source reports each, the
    loop writes it into the run (calls.py RunSampling)."""

    def record(self, request: "SamplingRecord") -> None:
        """A request as it comes (before the model is asked: the cap counts it), or a refusal kept on the record."""

    def charge(self, request: "SamplingRecord") -> None:
        """An answered request's usage and cost, added to the run's totals."""


@dataclass(frozen=True)
class RunContext:
    """What a tool source may need of the run that makes a call, handed over with the call (as Pydantic AI hands
    its RunContext to toolsets), never looked up: a connection shared by many runs tags each call with its run's id,
    load_skill reads what the run loaded, delegate starts a sub-agent of exactly this run."""

    run_id: str
    state: "RunState | None" = None
    """The calling run's state, to read (what a call did to the run, a delegate call's child, comes back in its
    result and the loop applies it). None for a call made outside the loop (a test's own)."""
    children: ChildRuns | None = None
    """How to start or resume a sub-agent of this run; None where the caller can start none."""
    note_task: "Callable[[str, str], Awaitable[None]] | None" = None
    """(call id, task id): record the MCP task a server runs the call as in its pending call and save the run, before
    the task is followed (tools/tasks.py); None where nothing is saved."""
    on_elicit: OnElicit | None = None
    """Answers a tool's question at once; None: the question pauses the run for a person (tools/elicitation.py)."""
    model: LentModel | None = None
    """The run's model, for a server allowed to sample; None where no model is lent (a sampling request is
    refused)."""
    sampled: SamplingLedger | None = None
    """Where a server's sampling requests during the call are recorded and charged (the loop's); None where no run
    is charged (a request is refused)."""


@dataclass(slots=True)
class ToolRequest:
    """One call as a source gets it (a plain record, made every call: a source reads it and never changes it; a
    retry sends the same one again)."""

    call: ToolCall
    """The tool's name on this source (the ToolBox takes off a duplicate-name prefix), its arguments and call id."""
    run: RunContext
    timeout_s: float
    idempotency_key: str | None = None
    """The same for every send of one call of one run (idempotent tools only), so a retried write is answered once."""
    on_progress: ProgressFn | None = None
    """Gets the tool's progress reports (MCP notifications/progress) while the call runs; None: nobody listens."""
    sent_at: datetime | None = None
    """When the ToolBox sent it: a source that puts it on its result as `started_at` spares the ToolBox a copy."""


class ServerRequestFailed(Exception):
    """A tool server answered a prompts/ or resources/ request with an error; the message says which and why,
    `code` is the JSON-RPC error code."""

    def __init__(self, message: str, code: int, said: str | None = None):
        super().__init__(message)
        self.code = code
        self.said = message if said is None else said
        """The server's own error message, as it wrote it."""


class ToolTransportError(Exception):
    """The call may not have reached the tool, or its answer was lost (server died, connection dropped)."""


StartFailure = Literal[
    "no_command",
    "exited",
    "dropped",
    "list_failed",
    "unreachable",
    "refused",
    "token_refused",
    "not_found",
    "timeout",
    "failed",
]
"""`exited`: before it answered initialize; `dropped`: after initialize, before it listed its tools; `list_failed`: it
answered tools/list with an error of its own."""


class ToolServerFailed(Exception):
    """A tool server could not be started or reached at the start of a run. `kind` says which way, `said` is the
    server's own error line (a stdio server's stderr) or the HTTP status line, `target` the command line or URL."""

    def __init__(self, server: str, target: str, kind: StartFailure, reason: str, said: str | None = None):
        self.server, self.target, self.kind, self.reason, self.said = server, target, kind, reason, said
        super().__init__(f"tool server '{server}' ({target}) {reason}" + (f": {said}" if said else ""))
