"""The strategies' seam after a text answer: a workflow's or plan's next step, a new plan after a failed step, a
review that sends the draft back. Each asks the model through the loop's one side exchange (`Aside`: a request as
a user turn, the reply a step whose tool calls are answered, never run); the loop owns the run, the limits and the
saves, and hands them over as three functions."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from toolwire_client import texts
from toolwire_client.run import exits
from toolwire_client.run.state import RunState, StepKind, StepRecord
from toolwire_client.strategies.plan import PlanError, Planning, planned, read_plan, replan_request, step_failure
from toolwire_client.strategies.review import Review, draft_passes
from toolwire_client.strategies.workflow import Workflow
from toolwire_otel.content import record_plan
from toolwire_shared.messages import UserMessage

T = TypeVar("T")


class Aside(Protocol):
    """The loop's side question (Agent._aside): None only for an `optional` one the limits leave no room for."""

    def __call__(
        self, state: RunState, kind: StepKind, request: str, parse: Callable[[str], T], optional: bool = False
    ) -> Awaitable[tuple[StepRecord, T] | None]: ...


@dataclass(frozen=True, slots=True)
class Strategies:
    """A run's plan, workflow and review (each None when not configured) on the loop's parts."""

    plan: Planning | None
    workflow: Workflow | None
    review: Review | None
    aside: Aside
    end_step: Callable[[RunState, StepRecord], None]
    save: Callable[[RunState], Awaitable[None]]

    async def start(self, state: RunState) -> None:
        """Before the first step: a workflow's first step, or plan-and-execute's plan; nothing without either."""
        if self.workflow is not None:
            state.plan = self.workflow.plan()
            state.messages.append(UserMessage(content=state.plan.step_message()))
        elif self.plan is not None:
            await self._make_plan(state, texts.plan_request(self.plan.max_plan_steps))

    async def goes_on(self, state: RunState, answer: StepRecord) -> bool:
        """True when the run goes on after this text answer (the plan's next step, a new plan after a failed step, a
        review that sent the draft back); False when the text is the final answer."""
        return await self._next_in_plan(state, answer) or await self._sent_back(state, answer)

    async def _next_in_plan(self, state: RunState, answer: StepRecord) -> bool:
        """Plan-and-execute and workflows: the answer ends the running step; send the next one, or plan again when
        the model reported the step failed. False without a plan or once its last step is answered."""
        plan = state.plan
        if plan is None or plan.finished:
            return False
        why = step_failure(answer.model_text)
        if why is not None:
            try:
                request = replan_request(plan, self.plan, why)
            except PlanError as exc:
                raise exits.PlanFailed(f"stopped: {exc}") from exc
            self.end_step(state, answer)
            await self._make_plan(state, request)
            return True
        plan.finish_step(answer.model_text)
        if plan.finished:
            return False  # the last step's answer is the run's answer (reviewed, when a review is configured)
        self.end_step(state, answer)
        state.messages.append(UserMessage(content=plan.step_message()))
        await self.save(state)
        return True

    async def _make_plan(self, state: RunState, request: str) -> None:
        """Ask for a numbered plan (one re-ask when it does not parse), keep it on the state and send its first
        step; a plan that fails twice stops the run."""
        assert self.plan is not None
        most = self.plan.max_plan_steps
        for attempt in (1, 2):
            asked = await self.aside(state, "plan", request, lambda text: read_plan(text, most))
            assert asked is not None  # not optional: a limit's exit ends the run
            reply, steps = asked
            if not isinstance(steps, PlanError):
                state.plan = planned(steps, state.plan)
                record_plan(steps, state.plan.replans)
                self.end_step(state, reply)
                state.messages.append(UserMessage(content=state.plan.step_message()))
                await self.save(state)
                return
            if attempt == 2:
                raise exits.PlanFailed(f"stopped: the model's plan did not parse after one re-ask ({steps})") from steps
            self.end_step(state, reply)
            request = texts.plan_retry(texts.PLAN_CALLED_TOOLS if reply.tool_calls else str(steps))

    async def _sent_back(self, state: RunState, draft: StepRecord) -> bool:
        """Reflection: True when the review of this draft found problems and the model gets another try. The draft
        stands unreviewed when no review is configured, its retries are spent, or no budget is left for one."""
        review = self.review
        rejected = sum(1 for s in state.steps if s.kind == "review" and not draft_passes(s.model_text))
        if review is None or rejected >= review.max_retries:
            return False
        self.end_step(state, draft)
        asked = await self.aside(state, "review", texts.review_request(review.criteria), draft_passes, optional=True)
        if asked is None:
            return False  # the list ends on the draft, a valid record
        verdict, ok = asked
        if ok and not verdict.tool_calls:
            self.end_step(state, verdict)
            raise exits.FinalAnswer(draft.model_text, len(state.steps))
        state.messages.append(UserMessage(content=texts.REVIEW_RETRY))
        self.end_step(state, verdict)
        await self.save(state)
        return True
