"""The message-order rules every provider enforces, checked before each request so a mistake names the message
index here instead of coming back as an API 400 several frames away. The check is incremental: an OrderCheck
remembers how far the list was found valid, so a step costs the same on a long run as on a short one; a list that
was replaced, cut back, or changed where the last check ended (its last checked message is not where it was) is
checked whole. (The loop's only other edit, a run's system prompt joined with the servers' instructions before its
first request, changes no order.)"""

from typing import NoReturn

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


class OrderCheck:
    """Checks a growing message list: each call reads only the messages added since the last one."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self, messages: list[Message] | None = None) -> None:
        self.of = messages  # the list checked, and the last message found valid in it: an edit other than an append
        self.last: Message | None = None  # (a list replaced, cut back, or changed before its end) is checked whole
        self.checked = 0
        self.asked_at = -1  # index of the assistant turn whose results are being read
        self.waiting: dict[str, str] = {}  # call id -> tool name, not answered yet
        self.answered: set[str] = set()
        self.in_results = False

    def check(self, messages: list[Message]) -> None:
        """Raise MessageOrderError at the first message that breaks a rule."""
        checked = self.checked
        if messages is not self.of or (checked and (len(messages) < checked or messages[checked - 1] is not self.last)):
            self._reset(messages)  # not the list last checked, or not only appended to since: start again
        index = self.checked
        try:
            for index in range(self.checked, len(messages)):
                self._read(index, messages[index])
            index = len(messages)
        finally:  # found valid up to the message that broke a rule, or to the end
            if index > self.checked:
                self.checked, self.last = index, messages[index - 1]
        if self.waiting:
            missing = ", ".join(f"{name} ({cid})" for cid, name in self.waiting.items())
            raise MessageOrderError(self.asked_at, ANSWERED_ONCE, f"these calls have no result: {missing}")

    def _read(self, index: int, message: Message) -> None:
        if isinstance(message, ToolResultMessage):
            if not (self.in_results and message.call_id in self.waiting):  # else it breaks a rule: which one
                self._refuse_result(index, message)
            self.waiting.pop(message.call_id)
            self.answered.add(message.call_id)
            return
        if self.waiting:
            missing = ", ".join(f"{name} ({cid})" for cid, name in self.waiting.items())
            detail = f"the calls of message {self.asked_at} are not all answered before it: {missing}"
            raise MessageOrderError(index, RIGHT_AFTER, detail)
        self.in_results = False
        if isinstance(message, AssistantMessage):
            if not message.text and not message.tool_calls:
                raise MessageOrderError(index, NOT_EMPTY, "the assistant turn has no text and no tool calls")
            waiting = {call.id: call.name for call in message.tool_calls}
            if len(waiting) != len(message.tool_calls):
                ids = [call.id for call in message.tool_calls]
                raise MessageOrderError(index, ANSWERED_ONCE, f"the turn repeats a call id: {ids}")
            self.waiting, self.answered = waiting, set()
            self.asked_at, self.in_results = index, bool(waiting)

    def _refuse_result(self, index: int, message: ToolResultMessage) -> NoReturn:
        """The rule a result out of place breaks, most telling first."""
        if message.call_id in self.answered:
            raise MessageOrderError(index, ANSWERED_ONCE, f"call {message.call_id} is answered a second time")
        if not self.in_results:
            raise MessageOrderError(
                index,
                RIGHT_AFTER,
                f"the result for {message.call_id} does not follow the assistant turn that asked for it "
                "(or its other results)",
            )
        raise MessageOrderError(index, NO_ORPHANS, f"no call with id {message.call_id} in the turn before it")


def check_order(messages: list[Message]) -> None:
    """The whole list checked from the start."""
    OrderCheck().check(messages)
