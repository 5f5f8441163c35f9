"""The saved state of a run: everything needed to show, resume or replay it, and nothing that is not derivable."""

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from operator import is_
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field

from toolwire_client.models.base import ModelReply
from toolwire_client.run.context_view import ViewMark
from toolwire_client.run.ordering import OrderCheck
from toolwire_client.run.pending import CallState as CallState  # the pending-call machine's, named here as before
from toolwire_client.run.pending import PendingCall as PendingCall
from toolwire_client.run.pending import args_hash as args_hash
from toolwire_client.run.pending import now as now
from toolwire_client.run.plan_state import Plan
from toolwire_client.run.script_record import ScriptRecord
from toolwire_shared.messages import AssistantMessage, Message, ToolCall
from toolwire_shared.results import SubRun, ToolResult
from toolwire_shared.tools import ToolSpec
from toolwire_shared.usage import Usage

RunStatus = Literal["running", "done", "stopped", "waiting_for_approval", "failed"]

StepKind = Literal["act", "review", "plan", "compact"]

AskedKey = tuple[str, str]
"""What the repeat guard counts a call by (`asked_key`): its tool's name and its arguments' hash."""


@dataclass(slots=True, kw_only=True)
class StepRecord:
    """One model call and the tool calls it asked for, with what came back: the row of the trace table. A plain record
    (made every step, changed in place as its calls end): validated where a run is loaded, dumped as ever."""

    index: int
    kind: StepKind = "act"
    """"review": the model checked its draft answer against the run's criteria (see review.py); "plan": the model
    wrote (or rewrote) the run's plan (see plan.py); "compact": the model summarised older turns to keep the
    requests within the context budget (context/compaction.py), a side exchange whose text is the summary."""
    plan_step: tuple[int, int] | None = None
    """(i, n): the call worked on step i of the n-step plan (or workflow) running then."""
    model_text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    usage_so_far: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    model_latency_s: float = 0.0
    started_at: datetime = field(default_factory=now)
    finished_at: datetime | None = None
    model_reply: ModelReply | None = None
    """The model's reply, kept so `toolwire replay` can feed it back with no network (turned into JSON only when
    the run is saved, not on every step)."""
    tools: list[ToolSpec] | None = None
    """The tool definitions offered from this step on, when a server's tool list changed since the step before (MCP
    `list_changed`); None: the same as before (the first step's are `RunConfig.tools`). Replay offers them again."""
    loaded: Annotated[list[str] | None, Field(exclude_if=lambda loaded: loaded is None)] = None
    """With tool search on: the tools it had loaded when this step ended (searched out, or called before they were
    loaded), in load order; the next step is offered them in full. A resumed run loads them again. None (and left
    out of the saved run) without tool search."""
    view: Annotated[ViewMark | None, Field(exclude_if=lambda view: view is None)] = None
    """What the request of this step was made of when not the whole list (run/context_view.py): the results cleared
    to stubs and the summary in place of older turns; a compact step's is the mark it leaves for the steps after."""


class SamplingRecord(BaseModel):
    """One time a tool server asked to borrow the run's model (MCP `sampling/createMessage`): what it asked, and what
    the model answered or why it was refused. Its usage and cost are in the run's totals."""

    server: str
    call_id: str | None = None
    """The tool call it came during; None when a handshake-era server asked while several of the run's calls were
    in flight (its request does not say which)."""
    step: int = 0
    """The step whose tool calls were running."""
    asked: list[Message] = Field(default_factory=list)
    """The request as the model got it (its system prompt first); empty for a refused one."""
    max_tokens: int = 0
    answer: str | None = None
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = None
    refused: str | None = None
    """Why it was not answered (the MCP error's text the server got); None when the model answered."""
    at: datetime = Field(default_factory=now)


class RunState(BaseModel):
    run_id: str
    agent_name: str
    task: str
    model: str
    status: RunStatus = "running"
    messages: list[Message] = Field(default_factory=list)
    steps: list[StepRecord] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = None
    pending: list[PendingCall] = Field(default_factory=list)
    stop_reason: str | None = None
    report: str | None = None
    final_answer: str | None = None
    trace_id: str | None = None
    """Hex trace id of the run's invoke_agent span, so a resumed run links to it."""
    started_at: datetime = Field(default_factory=now)
    updated_at: datetime = Field(default_factory=now)
    plan: Plan | None = None
    """The plan (or workflow) being run: its steps, the one running, what the finished ones answered."""
    config: dict[str, Any] = Field(default_factory=dict)
    """How to rebuild the run in another process: model spec, tool server commands/URLs, limits (`toolwire resume`)."""
    version: int = 0
    """Bumped on every save; the store refuses a save whose version is stale (two resumers)."""
    parent_run_id: str | None = None
    parent_call_id: str | None = None
    """A sub-agent's run: the run and the delegate call that started it."""
    children: dict[str, SubRun] = Field(default_factory=dict)
    """Sub-agent runs by the id of the delegate call that started each, as last counted in this run's totals."""
    sampling: list[SamplingRecord] = Field(default_factory=list)
    """The tool servers' requests for the run's model (MCP sampling), answered or refused, in order."""
    script: ScriptRecord | None = Field(default=None, exclude_if=lambda record: record is None)
    """A code-mode script's run (a child of the run whose run_code call started it): where to resume the script.
    Left out of the saved JSON when None: other runs save what they saved before."""

    __slots__ = ("_derived",)
    """What is derived from the state and kept beside it, in a plain slot outside pydantic: read at attribute speed,
    never saved, and not copied (a copy derives it again)."""
    if TYPE_CHECKING:
        _derived: "Derived"

    @property
    def derived(self) -> "Derived":
        try:
            return self._derived
        except AttributeError:  # a new state, a loaded one or a copy: derived afresh
            self._derived = made = Derived()
            return made

    @property
    def steps_taken(self) -> int:
        """What the step limit counts: this run's model calls and those of its sub-agents."""
        children = self.children
        return len(self.steps) + sum(child.steps for child in children.values()) if children else len(self.steps)

    def count_child(self, call_id: str, child: SubRun) -> None:
        """Add what the sub-agent of `call_id` spent since it was last counted to this run's usage and cost."""
        before = self.children.get(call_id, SubRun(run_id=child.run_id, status="running"))
        self.usage = self.usage + (child.usage - before.usage)
        if child.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + child.cost_usd - (before.cost_usd or 0.0)
        self.children[call_id] = child

    def check_order(self) -> None:
        """MessageOrderError if the message list is not a valid request; reads only what was added since last time."""
        self.derived.order.check(self.messages)

    def asked_before(self, turn: int) -> Counter[AskedKey]:
        """How often each call (name and arguments, by `asked_key`) was asked for in the assistant turns before
        message `turn`.

        Derived from the message list alone, counted incrementally (a long run does not rescan its history)."""
        return self.derived.asked.before(self.messages, turn)


class Derived:
    """What a run state's checks and its store keep between steps, derived from the state alone."""

    __slots__ = ("asked", "order", "written")

    def __init__(self) -> None:
        self.order = OrderCheck()
        self.asked = AskedCount()
        self.written: Any = None
        """The run store's note of what it last wrote of this state (store/layout.py): a save appends only what is
        new."""


def asked_key(call: ToolCall) -> AskedKey:
    """What the repeat guard counts a call by, whatever its id: its tool and its arguments' hash (the one its pending
    call keeps: made once a call, for both)."""
    return call.name, args_hash(call.arguments)


class AskedCount:
    """The calls asked for in a growing message list, read once each (a plain object: a pydantic private attribute
    costs a lookup on every read and write)."""

    __slots__ = ("counts", "last", "last_calls", "last_keys", "of", "upto")

    def __init__(self) -> None:
        self.counts: Counter[AskedKey] = Counter()
        self.upto = 0
        self.of: list[Message] | None = None
        self.last: Message | None = None
        """The list counted and its last message counted: a list replaced or edited before there is counted afresh."""
        self.last_calls: list[ToolCall] = []
        self.last_keys: list[AskedKey] = []
        """The last turn's calls and their keys (a key is a JSON dump hashed: made once per call)."""

    def repeats(self, messages: list[Message], calls: list[ToolCall], limit: int) -> list[tuple[ToolCall, int]]:
        """The `calls` of the turn that ends `messages` asked for `limit` times or more, counting every turn before
        it and this turn's own calls so far (the repeat guard's one question, asked once a step)."""
        before, found = self.before(messages, len(messages) - 1), []
        this_turn: dict[AskedKey, int] = {}
        for call, key in zip(calls, self.keys(calls), strict=True):
            this_turn[key] = times = this_turn.get(key, 0) + 1
            times += before.get(key, 0)
            if times >= limit:
                found.append((call, times))
        return found

    def keys(self, calls: list[ToolCall]) -> list[AskedKey]:
        last = self.last_calls
        if len(calls) != len(last) or not all(map(is_, calls, last)):  # the same call objects: the same keys
            self.last_calls, self.last_keys = list(calls), [asked_key(call) for call in calls]
        return self.last_keys

    def args_hash(self, call: ToolCall) -> str:
        """`call`'s arguments hash, as its key has it when it is one of the last turn's calls."""
        for counted, key in zip(self.last_calls, self.last_keys, strict=True):
            if counted is call:
                return key[1]
        return args_hash(call.arguments)

    def before(self, messages: list[Message], turn: int) -> Counter[AskedKey]:
        upto = self.upto
        if messages is not self.of or (upto and (turn < upto or messages[upto - 1] is not self.last)):
            self.counts, self.upto, self.of = Counter(), 0, messages  # replaced, cut back or edited: count afresh
        counts = self.counts
        for n in range(self.upto, turn):
            message = messages[n]
            if isinstance(message, AssistantMessage) and message.tool_calls:
                for key in self.keys(message.tool_calls):
                    counts[key] = counts.get(key, 0) + 1
        if turn:
            self.upto, self.last = turn, messages[turn - 1]
        return self.counts
