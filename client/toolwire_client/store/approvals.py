"""A person's yes or no on a waiting tool call, bound to the call id and the hash of the arguments they saw.

The decision, and who made it (`by`: the OS user unless named), is appended to the approval events and written onto
the PendingCall of the saved state in one transaction, so `resume` only looks at RunState. Fail closed: anything
unclear (unknown call, changed arguments, a second decision, an approval already used) records nothing and raises
ApprovalRefused saying why.
"""

import getpass
import os

from toolwire_client.run.state import PendingCall, RunState
from toolwire_client.store.base import Ruling, RunStore
from toolwire_client.store.sql import ApprovalRefused

__all__ = ["ApprovalRefused", "approve", "decided", "default_approver", "reject", "root_run", "waiting_calls"]


def default_approver() -> str:
    """Who decides when no one is named: the OS user, else what is known of them (a container's uid has no name)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        uid = os.getuid() if hasattr(os, "getuid") else None
        return f"uid {uid} (no user name)" if uid is not None else "unknown user"


def _approver(by: str | None) -> str:
    named = default_approver() if by is None else by.strip()
    if not named:
        raise ApprovalRefused("an approver needs a name, e.g. --as alice (default: the OS user)")
    return named


async def waiting_calls(store: RunStore, run_id: str) -> list[PendingCall]:
    state = await store.load(run_id)
    return [p for p in state.pending if p.waits_for_approval]


async def _target(store: RunStore, run_id: str, call_id: str | None) -> str:
    if call_id is not None:
        return call_id
    waiting = await waiting_calls(store, run_id)
    if len(waiting) == 1:
        return waiting[0].call.id
    if not waiting:
        raise ApprovalRefused(f"run {run_id} has no call waiting for approval")
    ids = ", ".join(p.call.id for p in waiting)
    raise ApprovalRefused(f"run {run_id} has {len(waiting)} calls waiting ({ids}); name the one you mean")


async def approve(
    store: RunStore, run_id: str, call_id: str | None = None, *, shown_hash: str | None = None, by: str | None = None
) -> PendingCall:
    """Approve one waiting call (the only one, when call_id is None) as `by` (default: the OS user)."""
    approver = _approver(by)
    target = await _target(store, run_id, call_id)
    return await store.decide(run_id, target, Ruling("approve", shown_hash=shown_hash, by=approver))


async def reject(
    store: RunStore,
    run_id: str,
    call_id: str | None,
    reason: str,
    *,
    shown_hash: str | None = None,
    by: str | None = None,
) -> PendingCall:
    """Reject one waiting call as `by` (default: the OS user); the model will read `ERROR: a person rejected this
    action: REASON`."""
    approver = _approver(by)
    if not reason.strip():
        raise ApprovalRefused(
            "a rejection needs a reason the model can act on, e.g. --reason 'refunds over 50 need a manager'"
        )
    target = await _target(store, run_id, call_id)
    return await store.decide(run_id, target, Ruling("reject", reason.strip(), shown_hash, approver))


async def root_run(store: RunStore, run_id: str) -> str:
    """The top run of a sub-agent's run (itself for a run no one delegated): the one a resume or a worker drives."""
    state = await store.load(run_id)
    while state.parent_run_id is not None:
        state = await store.load(state.parent_run_id)
    return state.run_id


async def decided(store: RunStore, state: RunState) -> bool:
    """Nothing left for a person: the run does not wait, or every call it waits on has its decision (or its answer),
    down through the sub-agents a delegate call waits on. Then the run is about to go on."""
    if state.status != "waiting_for_approval":
        return True
    if any(p.waits_for_person for p in state.pending):
        return False
    children = [child for p in state.pending if (child := p.waiting_child)]
    return all([await decided(store, await store.load(child)) for child in children])
