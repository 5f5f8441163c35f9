"""What the sub-agent tests share: the rules a client holds a stream's subagents to, and the loopback model: as the
parent it hands the refund to a sub-agent (`delegate`) and then
says what came back; as the sub-agent (its system prompt is the sub-agent's) it makes two lookups in parallel, then
(once `gate` is set) the refund, which waits for approval, then its answer. The sub-agent numbers its calls as the
parent did (`toolu_1` twice), as many models do: the stream must keep them apart."""

import json
from collections import Counter
from typing import Any

from helpers.fake_providers import HeldModel, RecordedRequest, Reply, anthropic_message, assistant_turns
from toolwire_client import texts

TASK = "Refund one keyboard of order A123"
DELEGATE = ("toolu_1", texts.DELEGATE_TOOL, {"task": TASK})
LOOKUPS = [
    ("toolu_1", "get_order", {"order_id": "A123"}),
    ("toolu_2", "get_policy", {"topic": "damaged_item"}),
]
REFUND = ("toolu_3", "issue_refund", {"order_id": "A123", "amount_cents": 2500})
CHILD_ANSWER = "Refunded 25.00 for order A123."
ANSWER = "The sub-agent refunded 25.00 for order A123."


class DelegatingModel(HeldModel):
    def __call__(self, request: RecordedRequest) -> Reply:
        asked = assistant_turns(request)
        if texts.DELEGATE_SYSTEM not in json.dumps(request.body.get("system", "")):
            return [anthropic_message("Handing it to a sub-agent.", [DELEGATE]), anthropic_message(ANSWER)][asked]
        self.hold(asked, "the sub-agent's")
        replies = [
            anthropic_message("Looking it up.", LOOKUPS),
            anthropic_message("Refunding one keyboard.", [REFUND]),
            anthropic_message(CHILD_ANSWER),
        ]
        return replies[asked]


def check_subagents(events: list[Any]) -> None:
    """The AG-UI subagent rules a client holds a stream to: a subagent's events between its SUBAGENT_STARTED and
    SUBAGENT_FINISHED (or SUBAGENT_ERROR), each started once, all closed before RUN_FINISHED; a record's events
    carry the subagent of its run (none for the thread's own); no message or tool call id twice."""
    open_subs: set[str] = set()
    for e in events:
        kind = e.type.value
        if kind == "SUBAGENT_STARTED":
            assert e.subagent_run_id not in open_subs
            open_subs.add(e.subagent_run_id)
        elif kind in ("SUBAGENT_FINISHED", "SUBAGENT_ERROR"):
            open_subs.remove(e.subagent_run_id)
        elif kind.startswith(("TEXT_MESSAGE", "TOOL_CALL", "STEP_")) and e.subagent_run_id is not None:
            assert e.subagent_run_id in open_subs, (kind, e.subagent_run_id)
        elif kind == "RUN_FINISHED":
            assert not open_subs
    starts = [e.tool_call_id for e in events if e.type.value == "TOOL_CALL_START"]
    messages = [e.message_id for e in events if e.type.value in ("TEXT_MESSAGE_START", "TOOL_CALL_RESULT")]
    assert [i for i, n in Counter(starts + messages).items() if n > 1] == []
