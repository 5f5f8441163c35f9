"""The approval rules as tables (client/toolwire_client/store/approval_rules.py): `verdict` over one call's event
record, and `answer_without_running` for a settled pending call. End to end: tests/store/test_approval_*.py."""

from dataclasses import replace

import pytest

from toolwire_client.run.state import CallState, PendingCall, args_hash
from toolwire_client.store.approval_rules import ApprovalEvent, NotApproved, answer_without_running, verdict
from toolwire_shared.messages import ToolCall

A, B = "binding-of-the-call", "binding-of-another-call"


def approve(bound: str = A) -> ApprovalEvent:
    return ApprovalEvent("approve", bound)


def reject(bound: str = A) -> ApprovalEvent:
    return ApprovalEvent("reject", bound, reason="no")


def use(bound: str = A) -> ApprovalEvent:
    return ApprovalEvent("use", bound)


@pytest.mark.parametrize(
    ("events", "idempotent", "expected"),
    [
        ([approve()], False, "run"),
        ([approve()], True, "run"),
        ([approve(), use()], True, "resend"),
        ([approve(), use()], False, "sent_before"),
        ([approve(), use(), use()], False, "sent_before"),
        ([approve(), use(B)], False, "run"),  # a use of another binding is not this call's
        ([use(), approve()], True, "resend"),  # the order of the record does not matter
        ([ApprovalEvent("tampered", A), approve()], False, "run"),  # a tamper note is no decision
        ([approve(), approve(B)], False, "run"),  # the first decision is the decision
    ],
)
def test_verdict(events: list[ApprovalEvent], idempotent: bool, expected: str) -> None:
    assert verdict(events, A, idempotent) == expected


@pytest.mark.parametrize(
    ("events", "why"),
    [
        ([], "no approval of it is on record"),
        ([use()], "no approval of it is on record"),
        ([ApprovalEvent("tampered", A)], "no approval of it is on record"),
        ([reject()], "a person rejected it"),
        ([reject(), approve()], "a person rejected it"),
        ([approve(B)], "it is not the call that was approved"),
        ([approve(B), use(A)], "it is not the call that was approved"),
    ],
)
@pytest.mark.parametrize("idempotent", [False, True])
def test_verdict_refuses(events: list[ApprovalEvent], why: str, idempotent: bool) -> None:
    with pytest.raises(NotApproved, match=why):
        verdict(events, A, idempotent)


ARGS = {"order_id": "A100"}


def pending(state: CallState, *, idempotent: bool = False, approved_args: dict[str, str] = ARGS) -> PendingCall:
    call = ToolCall(id="c1", name="refund", arguments=ARGS)
    return PendingCall(call=call, state=state, args_hash=args_hash(approved_args), idempotent=idempotent)


@pytest.mark.parametrize(
    ("p", "kind", "says"),
    [
        (pending("rejected"), "rejected", "rejected"),
        (pending("approved", approved_args={"order_id": "A999"}), "rejected", "changed after they were approved"),
        (pending("sent"), "outcome_unknown", "unknown"),
        (pending("approved"), None, None),  # approved as it stands: run it
        (pending("sent", idempotent=True), None, None),  # sent before, idempotent: send again with the same key
        (pending("pending_approval"), None, None),
        (pending("done"), None, None),
        (pending("waiting_on_child"), None, None),
    ],
)
def test_answer_without_running(p: PendingCall, kind: str | None, says: str | None) -> None:
    result = answer_without_running(p)
    if kind is None:
        assert result is None
        return
    assert result is not None
    assert (result.call_id, result.name, result.is_error, result.error_kind) == ("c1", "refund", True, kind)
    assert says is not None and says in result.content


def test_a_rejection_says_its_reason() -> None:
    p = replace(pending("rejected"), decision_reason="too large")
    result = answer_without_running(p)
    assert result is not None and "too large" in result.content
