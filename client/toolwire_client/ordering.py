"""The message-order rules every provider enforces, checked before each request so a mistake names the message
index here instead of coming back as an API 400 several frames away."""

from toolwire_shared.messages import AssistantMessage, Message, ToolResultMessage


class MessageOrderError(ValueError):
    """The message list breaks an ordering rule; `index` is the offending message, `rule` the rule broken."""

    def __init__(self, index: int, rule: str, detail: str):
        super().__init__(f"message {index} breaks the rule '{rule}': {detail}")
        self.index = index
        self.rule = rule


ANSWERED_ONCE = "every tool call answered exactly once"
RIGHT_AFTER = "results right after the assistant turn that asked for them"
NO_ORPHANS = "no orphan results"
NOT_EMPTY = "no empty assistant turn"


def check_order(messages: list[Message]) -> None:
    """Raise MessageOrderError at the first message that breaks a rule."""
    asked_at = -1  # index of the assistant turn whose results are being read
    waiting: dict[str, str] = {}  # call id -> tool name, not answered yet
    answered: set[str] = set()
    in_results = False
    for index, message in enumerate(messages):
        if isinstance(message, ToolResultMessage):
            _check_result(index, message, in_results, waiting, answered)
            waiting.pop(message.call_id)
            answered.add(message.call_id)
            continue
        if waiting:
            missing = ", ".join(f"{name} ({cid})" for cid, name in waiting.items())
            raise MessageOrderError(
                index, RIGHT_AFTER, f"the calls of message {asked_at} are not all answered before it: {missing}"
            )
        in_results = False
        if isinstance(message, AssistantMessage):
            if not message.text and not message.tool_calls:
                raise MessageOrderError(index, NOT_EMPTY, "the assistant turn has no text and no tool calls")
            ids = [call.id for call in message.tool_calls]
            if len(set(ids)) != len(ids):
                raise MessageOrderError(index, ANSWERED_ONCE, f"the turn repeats a call id: {ids}")
            waiting = {call.id: call.name for call in message.tool_calls}
            answered = set()
            asked_at, in_results = index, bool(ids)
    if waiting:
        missing = ", ".join(f"{name} ({cid})" for cid, name in waiting.items())
        raise MessageOrderError(asked_at, ANSWERED_ONCE, f"these calls have no result: {missing}")


def _check_result(
    index: int, message: ToolResultMessage, in_results: bool, waiting: dict[str, str], answered: set[str]
) -> None:
    if message.call_id in answered:
        raise MessageOrderError(index, ANSWERED_ONCE, f"call {message.call_id} is answered a second time")
    if not in_results:
        raise MessageOrderError(
            index,
            RIGHT_AFTER,
            f"the result for {message.call_id} does not follow the "
            "assistant turn that asked for it (or its other results)",
        )
    if message.call_id not in waiting:
        raise MessageOrderError(index, NO_ORPHANS, f"no call with id {message.call_id} in the turn before it")
