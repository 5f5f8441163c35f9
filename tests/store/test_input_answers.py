"""`toolwire answer`'s record on SQLite and PostgreSQL: one answer per question, whoever races; the answer and who
gave it on the pending call in the same transaction; a value that does not fit the schema records nothing."""

import re
from dataclasses import replace

import anyio
import pytest

from toolwire_client.run.state import PendingCall, RunState, args_hash
from toolwire_client.store import SqlRunStore
from toolwire_client.store.answers import AnswerRefused, answer, on_record, recent_answers
from toolwire_shared.elicitation import InputAnswer, InputWanted
from toolwire_shared.messages import ToolCall

QUESTION = InputWanted(
    key="q1",
    mode="form",
    message="How many?",
    requested_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    era="2026-07-28",
)


async def paused(store: SqlRunStore, run_id: str) -> None:
    call = ToolCall(id="call_1", name="count", arguments={})
    pending = PendingCall(call=call, state="pending_input", args_hash=args_hash({}), input=QUESTION)
    await store.save(RunState(run_id=run_id, agent_name="a", task="t", model="m", status="waiting_for_approval",
                              pending=[pending]))  # fmt: skip


async def test_one_answer_per_question_even_when_two_race(store: SqlRunStore) -> None:
    await paused(store, "run_race")
    with pytest.raises(AnswerRefused, match=re.escape('what fits: {"n": integer} (required: n)')):
        await answer(store, "run_race", None, InputAnswer(action="accept", content={"n": "three"}), by="eve")
    outcomes: list[str] = []

    async def one(n: int) -> None:
        try:
            await answer(store, "run_race", "call_1", InputAnswer(action="accept", content={"n": n}), by=f"p{n}")
            outcomes.append("recorded")
        except AnswerRefused as exc:
            outcomes.append(str(exc))
        except Exception as exc:  # the losing transaction may be refused by the database itself
            outcomes.append(type(exc).__name__)

    async with anyio.create_task_group() as group:
        for n in (1, 2):
            group.start_soon(one, n)
    assert outcomes.count("recorded") == 1, outcomes
    state = await store.load("run_race")
    [pending] = state.pending
    assert pending.state == "answered" and pending.answer is not None and pending.decided_by == pending.answer.by
    assert await on_record(store, "run_race", pending)
    forged = replace(pending, answer=InputAnswer(action="accept", content={"n": 99}, by="mallory"))
    assert not await on_record(store, "run_race", forged)
    [recorded] = await recent_answers(store)
    assert (recorded["call_id"], recorded["by"]) == ("call_1", pending.answer.by)
    with pytest.raises(AnswerRefused, match=r"already answered \(accept, by p[12]\)"):
        await answer(store, "run_race", "call_1", InputAnswer(action="decline"), by="late")
