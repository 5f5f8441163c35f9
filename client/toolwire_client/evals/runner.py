"""Run every task of an eval file (repeated, concurrently where asked) through the real loop and judge each run."""

import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio

from toolwire_client.assembly.agents import toolbox_for
from toolwire_client.assembly.sources import build_sources
from toolwire_client.config import RunConfig, RunLimits, ServerSpec
from toolwire_client.evals.checks import called_tools, resolve_callable, right_order, right_tools
from toolwire_client.evals.spec import EvalFile, EvalTask
from toolwire_client.loop import Agent
from toolwire_client.models import make_model
from toolwire_client.models.base import Model
from toolwire_client.models.pricing import PriceTable, default_prices
from toolwire_client.run.state import RunState
from toolwire_client.store.base import RunStore
from toolwire_client.tools.shared_connections import SharedConnections
from toolwire_client.tools.skills import loaded_skills
from toolwire_client.tools.source import ToolSource

MAX_APPROVAL_ROUNDS = 5


@dataclass
class Attempt:
    """One run of one task, judged."""

    task: str
    repeat: int
    run_id: str | None = None
    status: str = "failed"
    stop_reason: str | None = None
    answer: str | None = None
    answer_ok: bool = False
    right_tools: bool | None = None
    right_order: bool | None = None
    within_steps: bool | None = None
    within_cost: bool | None = None
    within_replans: bool | None = None
    within_reviews: bool | None = None
    right_skills: bool | None = None
    called: list[str] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    """The skills the run loaded, in the order it first loaded them."""
    steps: int = 0
    replans: int = 0
    """New plans made after a failed step (plan-and-execute)."""
    reviews: int = 0
    """Review calls made (reflection)."""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    latency_s: float = 0.0
    error: str | None = None
    saved: bool = False
    """The failed run was written to the run store, so `toolwire replay RUN_ID` can reproduce it."""

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def success(self) -> bool:
        path = (
            self.right_tools,
            self.right_order,
            self.within_steps,
            self.within_cost,
            self.within_replans,
            self.within_reviews,
            self.right_skills,
        )
        return self.error is None and self.status == "done" and self.answer_ok and all(p is not False for p in path)


SourcesFactory = Callable[[list[ServerSpec]], list[ToolSource]]
OnAttempt = Callable[[Attempt], None]


def build_model(spec: str, usage: str | None) -> Model:
    """A model from its spec; a scripted model may take the task's usage_fn (a seed's token arithmetic)."""
    if usage is None:
        return make_model(spec)
    provider, _, name = spec.partition(":")
    if provider != "scripted":
        raise ValueError(f"usage = {usage!r} only applies to scripted models, not {spec!r}")
    from toolwire_client.models.providers import make_scripted

    return make_scripted(name, usage_fn=resolve_callable(usage))


def judge(attempt: Attempt, task: EvalTask, state: RunState) -> None:
    attempt.run_id, attempt.status, attempt.stop_reason = state.run_id, state.status, state.stop_reason
    attempt.answer = state.final_answer
    attempt.answer_ok = state.status == "done" and task.check.passes(state.final_answer, state)
    attempt.called = called_tools(state)
    attempt.steps = len(state.steps)
    attempt.replans = state.plan.replans if state.plan is not None else 0
    attempt.reviews = sum(1 for s in state.steps if s.kind == "review")
    attempt.skills = loaded_skills(state)
    attempt.input_tokens, attempt.output_tokens = state.usage.input_tokens, state.usage.output_tokens
    attempt.cost_usd = state.cost_usd
    expect = task.expect
    if expect is None:
        return
    if expect.tools is not None:
        attempt.right_tools = right_tools(expect.tools, attempt.called)
        attempt.right_order = right_order(expect.tools, attempt.called)
    if expect.max_steps is not None:
        attempt.within_steps = attempt.steps <= expect.max_steps
    if expect.max_replans is not None:
        attempt.within_replans = attempt.replans <= expect.max_replans
    if expect.max_reviews is not None:
        attempt.within_reviews = attempt.reviews <= expect.max_reviews
    if expect.skills is not None:
        attempt.right_skills = attempt.skills == expect.skills
    if expect.max_cost_usd is not None:
        # an unknown price cannot be shown to be within budget
        attempt.within_cost = state.cost_usd is not None and state.cost_usd <= expect.max_cost_usd


class EvalRunner:
    def __init__(
        self,
        evals: EvalFile,
        *,
        store: RunStore | None = None,
        prices: PriceTable | None = None,
        sources: SourcesFactory = build_sources,
        on_attempt: OnAttempt | None = None,
    ):
        self.evals, self.store, self.sources, self.on_attempt = evals, store, sources, on_attempt
        self.prices = prices or default_prices()

    async def run(self, *, repeat: int = 1, concurrency: int = 1) -> list[Attempt]:
        if repeat < 1 or concurrency < 1:
            raise ValueError(f"--repeat and --concurrency must be at least 1 (got {repeat} and {concurrency})")
        jobs = [(task, n) for n in range(1, repeat + 1) for task in self.evals.tasks]
        attempts: list[Attempt | None] = [None] * len(jobs)
        limiter = anyio.CapacityLimiter(concurrency)

        async def one(i: int, task: EvalTask, n: int) -> None:
            async with limiter:
                attempts[i] = await self.attempt(task, n)
            if self.on_attempt is not None:
                self.on_attempt(attempts[i])  # type: ignore[arg-type]

        async with SharedConnections(stdio=False), anyio.create_task_group() as group:  # one pool per HTTP server
            for i, (task, n) in enumerate(jobs):
                group.start_soon(one, i, task, n)
        return [a for a in attempts if a is not None]

    async def attempt(self, task: EvalTask, n: int) -> Attempt:
        """Run one task once; nothing raised here stops the other tasks, it becomes the attempt's error."""
        attempt = Attempt(task=task.name, repeat=n)
        started = time.perf_counter()
        state: RunState | None = None
        try:
            state = await self._run_task(task)
            judge(attempt, task, state)
        except Exception as exc:  # a broken task must not end the eval; it is a failure with its reason
            attempt.error = f"{type(exc).__name__}: {exc}"
        attempt.latency_s = time.perf_counter() - started
        if state is not None and not attempt.success and self.store is not None:
            attempt.saved = await self._save(state, attempt)
        return attempt

    async def _run_task(self, task: EvalTask) -> RunState:
        spec = self.evals.model_for(task)
        model = build_model(spec, task.usage)
        prices = self.prices
        limits = RunLimits(max_steps=task.max_steps or self.evals.max_steps)
        if task.expect is not None and task.expect.max_cost_usd is not None:
            limits = limits.model_copy(update={"max_cost_usd": task.expect.max_cost_usd})
        attempt_dir = tempfile.mkdtemp(prefix="toolwire-eval-")
        servers = [server.expand({"attempt_dir": attempt_dir}) for server in self.evals.servers]
        config = RunConfig(
            model=spec,
            servers=servers,
            name=f"eval:{task.name}",
            system=task.system or self.evals.system,
            limits=limits,
            risky_tools=sorted(task.risky_tools or []),
            review=task.review,
            plan=task.plan,
            workflow=task.workflow,
            eval_task=task.name,
            delegate=task.delegate,
            skills=task.skills,
        )
        toolbox = toolbox_for(config, self.sources(servers))
        agent = Agent(model, toolbox, config=config, price_fn=lambda usage: prices.cost(spec, usage))
        try:
            async with agent.toolbox:
                state = await agent.run(task.task)
                rounds = 0
                while task.approve and state.status == "waiting_for_approval" and rounds < MAX_APPROVAL_ROUNDS:
                    rounds += 1
                    for pending in state.pending:
                        if pending.waits_for_approval:
                            pending.approve("approved by the eval file", None)
                    state = await agent.resume(state)
        finally:
            await model.aclose()
            shutil.rmtree(attempt_dir, ignore_errors=True)
        return state

    async def _save(self, state: RunState, attempt: Attempt) -> bool:
        assert self.store is not None
        try:
            await self.store.save(state)
        except Exception as exc:  # the verdict stands even if the store is down; say why it is not replayable
            attempt.error = attempt.error or f"the failed run could not be saved: {exc}"
            return False
        return True
