"""The approval rules as pure functions over the append-only record of one call's events: what a person decided,
whether a run already used it, and so whether the exact call about to run may run. The store only reads and appends
the events; nothing here trusts the saved run state."""

import hashlib
import json
from dataclasses import dataclass
from typing import Literal

from toolwire_client import texts
from toolwire_client.run.state import PendingCall, args_hash
from toolwire_shared.messages import ToolCall
from toolwire_shared.results import ToolResult, failed

Event = Literal["approve", "reject", "use", "tampered"]
Verdict = Literal["run", "resend", "sent_before"]


@dataclass(frozen=True)
class ApprovalEvent:
    event: Event
    binding: str
    reason: str | None = None


class NotApproved(Exception):
    """The call about to run has no matching decision: the run state says otherwise, so it was tampered with."""


def binding(run_id: str, call: ToolCall) -> str:
    """What an approval is bound to: the run, the call id, the tool name and the canonical arguments."""
    canonical = json.dumps([run_id, call.id, call.name, call.arguments], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def decision(events: list[ApprovalEvent]) -> ApprovalEvent | None:
    """The person's decision on the call: its one approve or reject event (a second is never recorded)."""
    return next((e for e in events if e.event in ("approve", "reject")), None)


def verdict(events: list[ApprovalEvent], bound: str, idempotent: bool) -> Verdict:
    """May the call bound as `bound` run now? 'run' (a first time), 'resend' (sent before, idempotent: again with
    the same key) or 'sent_before' (sent before and not idempotent: its outcome is unknown, never sent again).
    Raises NotApproved when no approval of exactly this call is on record."""
    decided = decision(events)
    if decided is None:
        raise NotApproved("no approval of it is on record")
    if decided.event == "reject":
        raise NotApproved("a person rejected it")
    if decided.binding != bound:
        raise NotApproved("it is not the call that was approved (its tool or arguments changed)")
    if any(e.event == "use" and e.binding == bound for e in events):
        return "resend" if idempotent else "sent_before"
    return "run"


def answer_without_running(p: PendingCall) -> ToolResult | None:
    """The result a settled pending call gets without running, or None when it should be (re)sent."""
    call = p.call
    if p.is_rejected:
        return failed(call.id, call.name, "rejected", texts.rejected(p.decision_reason or "no reason given"))
    if p.is_approved and p.args_hash != args_hash(call.arguments):
        return failed(call.id, call.name, "rejected", texts.changed_after_approval())
    if p.is_sent and not p.idempotent:
        return failed(call.id, call.name, "outcome_unknown", texts.outcome_unknown(call.name))
    return None
