"""The pending-call machine (run/pending.py) on its own: every state x every transition, allowed or refused with a
clear error, and what each allowed transition leaves on the call. Pure and fast: no store, no server."""

from dataclasses import replace
from typing import Any

import pytest

from toolwire_client.run.pending import ALLOWED, CALL_STATES, CallState, IllegalTransition, PendingCall, Transition
from toolwire_client.run.state import args_hash
from toolwire_shared.elicitation import InputAnswer, InputWanted
from toolwire_shared.messages import ToolCall

CALL = ToolCall(id="c1", name="refund", arguments={"order_id": "A100"})
WANTED = InputWanted(key="q1", era="2026-07-28", mode="form", message="Which date?")
GIVEN = InputAnswer(action="accept", content={"date": "2026-12-24"}, by="carol")
TRANSITIONS: tuple[Transition, ...] = ("approve", "reject", "answer", "send", "waits_on", "asks")
EXPECTED: dict[Transition, set[CallState]] = {
    "approve": {"pending_approval"},
    "reject": {"pending_approval"},
    "answer": {"pending_input"},
    "send": {"approved", "rejected", "sent", "done", "waiting_on_child", "answered"},
    "waits_on": {"sent"},
    "asks": {"sent"},
}
"""Written out by hand: the machine's own table must say the same."""


def pending(state: CallState, **fields: Any) -> PendingCall:
    return PendingCall(call=CALL, state=state, args_hash=args_hash(CALL.arguments), **fields)


def apply(p: PendingCall, transition: Transition) -> PendingCall:
    """The transition on `p`; the call as it is after (a new one for those that make one)."""
    if transition == "approve":
        p.approve("fine", "alice")
    elif transition == "reject":
        p.reject("too big", "bob")
    elif transition == "answer":
        p.answer_with(GIVEN)
    elif transition == "send":
        return PendingCall.sending(p.call, False, p)
    elif transition == "waits_on":
        return p.waits_on("child-1")
    else:
        return p.asks(WANTED)
    return p


def test_the_table_is_the_one_written_out() -> None:
    assert {t: set(states) for t, states in ALLOWED.items()} == EXPECTED


@pytest.mark.parametrize("transition", TRANSITIONS)
@pytest.mark.parametrize("state", CALL_STATES)
def test_every_state_and_transition(state: CallState, transition: Transition) -> None:
    p = pending(state, input=WANTED if state in ("pending_input", "answered") else None)
    if state not in EXPECTED[transition]:
        with pytest.raises(IllegalTransition, match=f"call 'c1' is {state}: it cannot {transition} \\(only from "):
            apply(p, transition)
        assert p.state == state  # refused: unchanged
        return
    after = apply(p, transition)
    landed = {"approve": "approved", "reject": "rejected", "answer": "answered", "send": "sent"}
    landed |= {"waits_on": "waiting_on_child", "asks": "pending_input"}
    assert after.state == landed[transition] and after.call == CALL and after.args_hash == args_hash(CALL.arguments)


def test_a_decision_keeps_why_and_who() -> None:
    approved, rejected = pending("pending_approval"), pending("pending_approval")
    approved.decide("approve", "fine", "alice")
    rejected.decide("reject", "too big", "bob")
    assert (approved.state, approved.decision_reason, approved.decided_by) == ("approved", "fine", "alice")
    assert (rejected.state, rejected.decision_reason, rejected.decided_by) == ("rejected", "too big", "bob")
    assert (approved.decided_as, rejected.decided_as) == ("approved", "rejected")
    with pytest.raises(ValueError, match="is sent, not decided"):
        _ = pending("sent").decided_as


def test_an_answer_is_kept_with_who_gave_it_and_sent_with_its_question() -> None:
    asked = pending("pending_input", input=WANTED, task_id="task-9")
    asked.answer_with(GIVEN)
    assert (asked.state, asked.answer, asked.decided_by) == ("answered", GIVEN, "carol")
    again = PendingCall.sending(CALL, True, asked)
    assert (again.state, again.input, again.answer, again.task_id, again.idempotent) == (
        "sent",
        WANTED,
        GIVEN,
        "task-9",
        True,
    )
    assert again.decided_by is None and again.decision_reason is None


def test_a_call_sent_again_follows_its_task_and_forgets_its_decision() -> None:
    approved = pending("approved", decision_reason="fine", decided_by="alice", approval_reason="named with --risky")
    again = PendingCall.sending(CALL, False, approved)
    assert replace(again, since=None) == replace(pending("sent"), since=None)
    followed = PendingCall.sending(CALL, False, pending("sent", task_id="task-7"))
    assert followed.task_id == "task-7" and followed.input is None


def test_what_a_sent_call_turns_into() -> None:
    sent = pending("sent", idempotent=True, task_id="task-7")
    child = sent.waits_on("child-1")
    assert (child.state, child.child_run_id, child.task_id, child.idempotent) == (
        "waiting_on_child",
        "child-1",
        None,
        True,
    )
    assert child.waiting_child == "child-1" and sent.waiting_child is None
    asked = sent.asks(WANTED)
    assert (asked.state, asked.input, asked.task_id, asked.answer) == ("pending_input", WANTED, "task-7", None)


def test_a_new_call_waiting_for_approval_says_why() -> None:
    p = PendingCall.asking_approval(CALL, "named with --risky", idempotent=False)
    assert (p.state, p.approval_reason, p.idempotent) == ("pending_approval", "named with --risky", False)
    assert not hasattr(p, "__dict__")  # a slotted record: no per-instance dict, no set of the fields given


@pytest.mark.parametrize("state", CALL_STATES)
def test_what_each_state_means(state: CallState) -> None:
    p = pending(state, child_run_id="child-1")
    assert p.waits_for_approval == (state == "pending_approval")
    assert p.waits_for_input == (state == "pending_input")
    assert p.waits_for_person == (state in ("pending_approval", "pending_input"))
    assert p.waits_on_child == (state == "waiting_on_child")
    assert p.waits_for_approval_here_or_below == (state in ("pending_approval", "waiting_on_child"))
    assert p.waits == (state in ("pending_approval", "waiting_on_child", "pending_input"))
    assert p.outlives_the_turn == (state in ("waiting_on_child", "pending_input"))
    assert (p.is_approved, p.is_rejected, p.is_sent, p.is_answered) == (
        state == "approved",
        state == "rejected",
        state == "sent",
        state == "answered",
    )
