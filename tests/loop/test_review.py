"""Reflection over the real support server on stdio: a draft final answer is checked against the run's criteria
by one more model call; a failing draft goes back to the model with what the review found, at most max_retries
times; the review is an ordinary exchange in the message list (valid, saved, replayable)."""

from toolwire_client import texts
from toolwire_client.config import RunConfig, RunLimits
from toolwire_client.loop import Agent
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.models.seed_scripts import recovers
from toolwire_client.replay import replay
from toolwire_client.run.ordering import check_order
from toolwire_client.run.state import RunState
from toolwire_client.strategies.review import Review
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import AssistantMessage, Message, ToolCall, UserMessage

from .conftest import TASK

CRITERION = "Give the currency as INR."


def reviewing(review_reply: str | None = None) -> ScriptedModel:
    """The seed's `recovers` run, a reviewer that finds 'rupees' where INR was asked for, and a fix on request.
    `review_reply` replaces the reviewer's own verdict."""

    def script(messages: list[Message]) -> AssistantMessage:
        last = messages[-1]
        if isinstance(last, UserMessage) and last.content == texts.review_request([CRITERION]):
            draft = next(m.text for m in reversed(messages) if isinstance(m, AssistantMessage))
            if review_reply is not None:
                return AssistantMessage(text=review_reply)
            return AssistantMessage(text="APPROVED" if "INR" in draft else "- the currency is rupees, not INR")
        if isinstance(last, UserMessage) and last.content == texts.REVIEW_RETRY:
            draft = messages[-4]  # the draft, the review request, the verdict, this request to fix it
            assert isinstance(draft, AssistantMessage)
            return AssistantMessage(text=draft.text.replace("rupees", "INR"))
        return recovers(messages)

    return ScriptedModel(script, name="reviewing")


async def run(source: McpSource, model: ScriptedModel, retries: int = 1, max_steps: int = 12) -> RunState:
    config = RunConfig(
        model="scripted:reviewing",
        limits=RunLimits(max_steps=max_steps),
        review=Review(criteria=[CRITERION], max_retries=retries),
    )
    async with ToolBox([source]) as box:
        return await Agent(model, box, config=config).run(TASK)


async def test_a_failing_draft_is_sent_back_once_and_the_fixed_answer_stands(support_source: McpSource) -> None:
    state = await run(support_source, reviewing(), retries=1)
    assert state.status == "done" and state.final_answer == "Order A123 costs 5900.0 INR with 18% GST."
    assert [s.kind for s in state.steps] == ["act"] * 4 + ["review", "act"]  # retries spent: the fix is unreviewed
    assert state.steps[4].model_text == "- the currency is rupees, not INR"
    check_order(state.messages)
    prompts = [m.content for m in state.messages if isinstance(m, UserMessage)]
    assert prompts[-2:] == [texts.review_request([CRITERION]), texts.REVIEW_RETRY]
    assert state.usage.input_tokens == sum(s.usage.input_tokens for s in state.steps)  # the review is paid for


async def test_with_a_second_try_the_fixed_draft_is_reviewed_and_approved(support_source: McpSource) -> None:
    state = await run(support_source, reviewing(), retries=2)
    assert state.final_answer == "Order A123 costs 5900.0 INR with 18% GST."
    assert [s.kind for s in state.steps][-4:] == ["act", "review", "act", "review"]
    assert state.steps[-1].model_text == "APPROVED"
    replayed = await replay(state)  # the review exchanges replay like any step
    assert replayed.identical, replayed.describe()


async def test_an_approved_first_draft_stands_and_an_unclear_verdict_is_not_approval(
    support_source: McpSource,
) -> None:
    state = await run(support_source, reviewing(review_reply="Approved."), retries=1)
    assert state.final_answer == "Order A123 costs 5900.0 rupees with 18% GST." and state.steps[-1].kind == "review"
    maybe = await run(support_source, reviewing(review_reply="Looks mostly APPROVED to me"), retries=1)
    assert [s.kind for s in maybe.steps][-2:] == ["review", "act"]  # sent back: APPROVED must be the first word


async def test_a_review_that_calls_a_tool_gets_it_answered_not_run(support_source: McpSource) -> None:
    def script(messages: list[Message]) -> AssistantMessage:
        last = messages[-1]
        if isinstance(last, UserMessage) and last.content.startswith("Review your last answer"):
            return AssistantMessage(tool_calls=[ToolCall(id="r1", name="issue_refund", arguments={"order_id": "A123"})])
        return recovers(messages)

    state = await run(support_source, ScriptedModel(script, name="reviewing"), retries=1)
    review = next(s for s in state.steps if s.kind == "review")
    assert [(r.call_id, r.error_kind, r.content) for r in review.results] == [("r1", "blocked", texts.REVIEW_NO_TOOLS)]
    check_order(state.messages)
    assert state.status == "done"


async def test_no_room_for_a_review_leaves_the_draft_as_the_answer(support_source: McpSource) -> None:
    state = await run(support_source, reviewing(), retries=1, max_steps=4)
    assert state.final_answer == "Order A123 costs 5900.0 rupees with 18% GST."
    assert [s.kind for s in state.steps] == ["act"] * 4 and isinstance(state.messages[-1], AssistantMessage)
