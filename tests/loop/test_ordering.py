"""check_order catches each broken rule and names the message index."""

import pytest

from toolwire_client.run.ordering import (
    ANSWERED_ONCE,
    NO_ORPHANS,
    NOT_EMPTY,
    RIGHT_AFTER,
    MessageOrderError,
    OrderCheck,
    check_order,
)
from toolwire_client.run.state import RunState
from toolwire_shared.messages import AssistantMessage, Message, ToolCall, ToolResultMessage, UserMessage


def ask(*ids: str) -> AssistantMessage:
    return AssistantMessage(tool_calls=[ToolCall(id=i, name="get_order", arguments={"order_id": i}) for i in ids])


def answer(call_id: str) -> ToolResultMessage:
    return ToolResultMessage(call_id=call_id, name="get_order", content="{}")


def broken(messages: list[Message]) -> MessageOrderError:
    with pytest.raises(MessageOrderError) as caught:
        check_order(messages)
    return caught.value


def test_a_well_formed_list_passes() -> None:
    check_order([UserMessage(content="t"), ask("a", "b"), answer("b"), answer("a"), AssistantMessage(text="done")])


def test_an_unanswered_call_names_the_turn_that_asked() -> None:
    error = broken([UserMessage(content="t"), ask("a", "b"), answer("a")])
    assert (error.index, error.rule) == (1, ANSWERED_ONCE) and "get_order (b)" in str(error)


def test_a_call_answered_twice() -> None:
    error = broken([UserMessage(content="t"), ask("a"), answer("a"), answer("a")])
    assert (error.index, error.rule) == (3, ANSWERED_ONCE)


def test_a_result_that_does_not_follow_its_turn() -> None:
    error = broken([UserMessage(content="t"), ask("a"), UserMessage(content="hurry"), answer("a")])
    assert (error.index, error.rule) == (2, RIGHT_AFTER)


def test_results_of_one_turn_must_be_contiguous() -> None:
    error = broken([UserMessage(content="t"), ask("a", "b"), answer("a"), AssistantMessage(text="x"), answer("b")])
    assert (error.index, error.rule) == (3, RIGHT_AFTER)


def test_an_orphan_result() -> None:
    error = broken([UserMessage(content="t"), ask("a"), answer("a"), answer("zzz")])
    assert (error.index, error.rule) == (3, NO_ORPHANS)


def test_a_result_with_no_turn_before_it() -> None:
    error = broken([UserMessage(content="t"), answer("a")])
    assert (error.index, error.rule) == (1, RIGHT_AFTER)


def test_an_empty_assistant_turn() -> None:
    error = broken([UserMessage(content="t"), AssistantMessage()])
    assert (error.index, error.rule) == (1, NOT_EMPTY) and "message 1" in str(error)


def test_the_incremental_check_reads_only_what_was_added_and_still_catches_each_rule() -> None:
    messages: list[Message] = [UserMessage(content="t"), ask("a"), answer("a")]
    check = OrderCheck()
    check.check(messages)
    assert check.checked == 3
    messages += [ask("b"), answer("a")]  # an orphan appended after the prefix was found valid
    with pytest.raises(MessageOrderError) as caught:
        check.check(messages)
    assert (caught.value.index, caught.value.rule) == (4, NO_ORPHANS)
    del messages[3:]  # cut back: the check starts again and finds the shorter list valid
    check.check(messages)
    messages.append(ask("c"))
    with pytest.raises(MessageOrderError) as caught:  # a turn left unanswered at the end is still refused
        check.check(messages)
    assert caught.value.rule == ANSWERED_ONCE and check.checked == 4


def test_a_list_replaced_or_edited_where_the_check_ended_is_checked_whole() -> None:
    """A resume, a replay or the fleet may put another list in place, or change one before its end: the mark of how
    far the old list was found valid must not carry over to it."""
    state = RunState(run_id="r", agent_name="a", task="t", model="m")
    state.messages = [UserMessage(content="t"), ask("a"), answer("a"), AssistantMessage(text="x")]
    state.check_order()
    state.messages = [UserMessage(content="t"), ask("a"), UserMessage(content="hurry"), answer("a"), ask("b")]
    with pytest.raises(MessageOrderError) as caught:  # the new list's early break, not only its end, is read
        state.check_order()
    assert (caught.value.index, caught.value.rule) == (2, RIGHT_AFTER)
    messages: list[Message] = [UserMessage(content="t"), ask("a"), answer("a")]
    check = OrderCheck()
    check.check(messages)
    messages[1:3] = [answer("a"), ask("a")]  # the same list, edited where the check ended and grown by one
    messages.append(answer("a"))
    with pytest.raises(MessageOrderError) as caught:
        check.check(messages)
    assert (caught.value.index, caught.value.rule) == (1, RIGHT_AFTER)
