"""A pending call's life in one place: its states, the transitions between them, and what each state means.

A tool call the loop could not answer at once is kept on `RunState.pending` as a PendingCall: waiting for a person's
approval, sent and not yet answered (what crash recovery looks at), waiting on a sub-agent, or waiting for the answer
to its tool's question. The loop (calls.py), the store (a decision, an answer), the CLI and the console change it only
through the transitions below and read it only through the predicates: an illegal transition raises
IllegalTransition saying which. The saved JSON is the model's fields, in this order (old runs load unchanged).

    (a new call) --asking_approval--> pending_approval --approve--> approved
                                                        --reject---> rejected
    (a new call, or approved, answered, sent, waiting_on_child on resume) --sending--> sent
    sent --asks--> pending_input --answer_with--> answered;    sent --waits_on--> waiting_on_child

`sending` is refused only from the two states that wait for a person (a rejected call is answered, not sent, unless
it carries an MCP task to follow).
"""

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, Self

from toolwire_shared.elicitation import InputAnswer, InputWanted
from toolwire_shared.messages import ToolCall
from toolwire_shared.sorted_json import sorted_dumps

CallState = Literal[
    "pending_approval", "approved", "rejected", "sent", "done", "waiting_on_child", "pending_input", "answered"
]
"""`waiting_on_child`: a delegate call whose sub-agent waits for a person (sent again on resume: resumes the child).
`pending_input`: its tool asked a person a question (`input`); `answered`: `toolwire answer` gave one (`answer`), and
the call is sent again with it on resume (tools/elicitation.py). `done` is never written (runs saved with it load)."""

Transition = Literal["approve", "reject", "answer", "send", "waits_on", "asks"]

CALL_STATES: tuple[CallState, ...] = (
    "pending_approval", "approved", "rejected", "sent", "done", "waiting_on_child", "pending_input", "answered"
)  # fmt: skip
PERSON_STATES: frozenset[CallState] = frozenset({"pending_approval", "pending_input"})
"""A person must act (approve or reject, or answer) before the run can go on."""
ALLOWED: dict[Transition, frozenset[CallState]] = {
    "approve": frozenset({"pending_approval"}),
    "reject": frozenset({"pending_approval"}),
    "answer": frozenset({"pending_input"}),
    "send": frozenset(CALL_STATES) - PERSON_STATES,  # a call waiting for a person is never sent
    "waits_on": frozenset({"sent"}),
    "asks": frozenset({"sent"}),
}
"""The states each transition may start from (the test table: tests/unit/test_pending_machine.py)."""

_canonical_json = sorted_dumps(",", ":")
"""json.dumps(..., sort_keys=True, separators=(",", ":")), its encoder built once."""


def now() -> datetime:
    return datetime.now(UTC)


def args_hash(arguments: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of the arguments: an approval holds only for exactly these arguments."""
    return hashlib.sha256(_canonical_json(arguments).encode()).hexdigest()


class IllegalTransition(ValueError):
    """A transition asked of a pending call in a state it may not start from (a bug, or a saved run changed by hand)."""

    def __init__(self, call_id: str, state: CallState, transition: Transition) -> None:
        allowed = ", ".join(sorted(ALLOWED[transition]))
        super().__init__(f"call '{call_id}' is {state}: it cannot {transition} (only from {allowed})")


@dataclass(slots=True, kw_only=True)
class PendingCall:
    """A tool call waiting for a person, or sent and not yet answered (what crash recovery looks at). A plain record:
    validated where a run is loaded, dumped to the same JSON as ever."""

    call: ToolCall
    state: CallState
    args_hash: str
    since: datetime = field(default_factory=now)
    decision_reason: str | None = None
    decided_by: str | None = None
    """Who approved or rejected it (a copy: the store's approval events are the record)."""
    idempotent: bool = False
    approval_reason: str | None = None
    """Why it waits for a person ("named with --risky", "marked risky by its server", "destructive per the
    server's annotations"); None in runs saved before it was kept."""
    child_run_id: str | None = None
    """For a delegate call waiting on its sub-agent: the sub-agent's run, where the person decides."""
    task_id: str | None = None
    """The MCP task its server runs it as (tools/tasks.py), saved before it is first polled: a resumed run follows
    that task instead of calling the tool again."""
    input: InputWanted | None = None
    """The question its tool asked (state `pending_input`, then `answered`, and kept while it is sent again)."""
    answer: InputAnswer | None = None
    """The person's answer to `input` (`toolwire answer`: a copy; the store's input answers are the record)."""

    # -- new pending calls ---------------------------------------------------------------------------------------
    @classmethod
    def asking_approval(cls, call: ToolCall, reason: str | None, idempotent: bool) -> Self:
        """A call that waits for a person's approval before it runs, for `reason`."""
        return cls._new(call, "pending_approval", idempotent, approval_reason=reason)

    @classmethod
    def sending(
        cls, call: ToolCall, idempotent: bool, before: "PendingCall | None" = None, hashed: str | None = None
    ) -> Self:
        """`call` marked sent (saved before it goes out). `before`: its pending copy until now, whose MCP task is
        followed (never created again) and whose question and answer go with it when it was answered. `hashed`: its
        `args_hash`, when the caller has it already (the repeat guard made it)."""
        if before is None:  # every call of every turn: no keyword dict to pass on
            hashed = args_hash(call.arguments) if hashed is None else hashed
            return cls(call=call, state="sent", args_hash=hashed, idempotent=idempotent)
        before._check("send")
        kept: dict[str, Any] = {}
        if before.state == "answered":
            kept = {"task_id": before.task_id, "input": before.input, "answer": before.answer}
        elif before.task_id is not None:
            kept = {"task_id": before.task_id}
        return cls._new(call, "sent", idempotent, **kept)

    @classmethod
    def _new(cls, call: ToolCall, state: CallState, idempotent: bool, **fields: Any) -> Self:
        return cls(call=call, state=state, args_hash=args_hash(call.arguments), idempotent=idempotent, **fields)

    # -- transitions ---------------------------------------------------------------------------------------------
    def approve(self, reason: str | None, by: str | None) -> None:
        """A person approved it (a copy of the store's approval event)."""
        self._check("approve")
        self.state, self.decision_reason, self.decided_by = "approved", reason, by

    def reject(self, reason: str | None, by: str | None) -> None:
        """A person rejected it, saying why (the model reads the reason)."""
        self._check("reject")
        self.state, self.decision_reason, self.decided_by = "rejected", reason, by

    def decide(self, decision: Literal["approve", "reject"], reason: str | None, by: str | None) -> None:
        if decision == "approve":
            self.approve(reason, by)
        else:
            self.reject(reason, by)

    def answer_with(self, given: InputAnswer) -> None:
        """A person answered its tool's question: sent again with `given` on resume."""
        self._check("answer")
        self.state, self.answer, self.decided_by = "answered", given, given.by

    def waits_on(self, child_run_id: str) -> "PendingCall":
        """Its sent delegate call came back with its sub-agent waiting for a person: the call waits on that run."""
        self._check("waits_on")
        return self._new(self.call, "waiting_on_child", self.idempotent, child_run_id=child_run_id)

    def asks(self, wanted: InputWanted) -> "PendingCall":
        """Its tool asked a person `wanted` while it was sent: the run waits for `toolwire answer` (an MCP task's
        question keeps its task, followed again with the answer)."""
        self._check("asks")
        return self._new(self.call, "pending_input", self.idempotent, input=wanted, task_id=self.task_id)

    def _check(self, transition: Transition) -> None:
        if self.state not in ALLOWED[transition]:
            raise IllegalTransition(self.call.id, self.state, transition)

    # -- what a state means --------------------------------------------------------------------------------------
    @property
    def waits_for_approval(self) -> bool:
        return self.state == "pending_approval"

    @property
    def waits_for_input(self) -> bool:
        """Its tool's question waits for an answer (`input`, the question)."""
        return self.state == "pending_input"

    @property
    def waits_for_person(self) -> bool:
        """An approval or an answer is wanted before the run goes on."""
        return self.state in PERSON_STATES

    @property
    def waits_on_child(self) -> bool:
        return self.state == "waiting_on_child"

    @property
    def waiting_child(self) -> str | None:
        """The sub-agent run it waits on, when it does."""
        return self.child_run_id if self.state == "waiting_on_child" else None

    @property
    def waits_for_approval_here_or_below(self) -> bool:
        """It waits for an approval, its own or one in the sub-agent its delegate call started."""
        return self.state in ("pending_approval", "waiting_on_child")

    @property
    def waits(self) -> bool:
        """It waits for anything at all: a person, or a sub-agent (kept when a run pauses)."""
        return self.state in ("pending_approval", "waiting_on_child", "pending_input")

    @property
    def outlives_the_turn(self) -> bool:
        """Kept on the run after its turn settled: it waits on a sub-agent or for an answer."""
        return self.state in ("waiting_on_child", "pending_input")

    @property
    def is_approved(self) -> bool:
        return self.state == "approved"

    @property
    def is_rejected(self) -> bool:
        return self.state == "rejected"

    @property
    def is_sent(self) -> bool:
        """Sent and not answered: a crash left it, or it is running now."""
        return self.state == "sent"

    @property
    def is_answered(self) -> bool:
        return self.state == "answered"

    @property
    def decided_as(self) -> Literal["approved", "rejected"]:
        """What a person decided, as the CLI and the console say it."""
        if self.state == "approved" or self.state == "rejected":
            return self.state
        raise ValueError(f"call '{self.call.id}' is {self.state}, not decided")
