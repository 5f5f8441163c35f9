"""The agent loop: ask the model, append its turn, run the calls it asked for, append the results, until an exit.

The core is `_drive`, `_loop`, `_step` and `_close_turn`; every exit is an exception (run/exits.py) and
`_close_turn` is the one place a step ends on one. Beside the core: the limits, and the one side exchange `_aside`
that the strategies' seam after a text answer asks (a plan's next step, a replan, a review: strategies/seam.py).
What happens to a turn's tool calls, and to those a paused or crashed run left, is calls.py; the model call
model_call.py; the checkpoints store/checkpoint.py.
"""

import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from typing import Any, TypedDict, TypeVar, Unpack

import anyio
from opentelemetry.trace import Span

from toolwire_client import texts
from toolwire_client.calls import TurnCalls, answer_the_rest, append_results, approval_reason, in_call_order
from toolwire_client.config import RunConfig, RunLimits, open_run
from toolwire_client.context.compaction import summary_cap
from toolwire_client.context.keeper import ContextKeeper, kept_results
from toolwire_client.context.native import NATIVE_SUMMARY_TOKENS, compactor, prepared
from toolwire_client.model_call import Split, ask_model
from toolwire_client.models.base import Model
from toolwire_client.models.token_split import SplitCounter
from toolwire_client.models.tokens import estimate_prompt
from toolwire_client.run import budget, exits
from toolwire_client.run.budget import PriceFn
from toolwire_client.run.context_view import NativeForm
from toolwire_client.run.hooks import ToolHook
from toolwire_client.run.ordering import MessageOrderError
from toolwire_client.run.state import RunState, StepKind, StepRecord, now
from toolwire_client.script_turns import script_driven
from toolwire_client.store import checkpoint, seal
from toolwire_client.store.base import RunStore
from toolwire_client.store.lease import Lease, held
from toolwire_client.strategies.seam import Strategies
from toolwire_client.tools.source import LentModel, ScriptTurns
from toolwire_client.tools.toolbox import ToolBox
from toolwire_otel.content import record_agent_content
from toolwire_otel.spans import agent_span, record_run_end
from toolwire_shared.elicitation import OnElicit
from toolwire_shared.messages import Message, SystemMessage, ToolCall, UserMessage
from toolwire_shared.options import refuse_unknown
from toolwire_shared.results import failed
from toolwire_shared.tools import ToolSpec, spec_json
from toolwire_shared.words import counted

OnStep = Callable[[RunState, StepRecord], None]


class AgentOptions(TypedDict, total=False):
    """What the caller plugs into an Agent (`Agent`, `Agent.of` and `build_agent` take them as keywords)."""

    hooks: tuple[ToolHook, ...]
    store: RunStore | None
    """Where each checkpoint is saved; none: the run is saved nowhere (resume it from its RunState)."""
    on_step: OnStep | None
    price_fn: PriceFn | None
    """What a reply cost (the cost budget, `max_cost_usd`, needs it)."""
    on_elicit: OnElicit | None
    """Answers a tool's question (MCP elicitation) at once; without it a question pauses the run until a person
    answers (`toolwire answer`), as an approval does."""


T = TypeVar("T")


def config_for(
    model: Model,
    name: str = "agent",
    system: str | None = None,
    limits: RunLimits | None = None,
    risky_tools: set[str] | None = None,
) -> RunConfig:
    """The RunConfig of an Agent given loose fields instead of a config: the model's spec, these, defaults else."""
    # the provider-table row, where it differs from the telemetry provider name (openai-responses)
    spec = f"{getattr(model, 'spec_prefix', model.provider)}:{model.model}"
    risky = sorted(risky_tools or ())
    return RunConfig(model=spec, name=name, limits=limits or RunLimits(), system=system, risky_tools=risky)


def check_resumable(state: RunState) -> None:
    """ValueError for a run that has ended: only one that waits for a person or was left running goes on. A code-mode
    script's run goes on only with the run that started it (its run_code call is sent again)."""
    if state.script is not None and state.parent_run_id is not None:
        raise ValueError(
            f"run {state.run_id} is the script of a run_code call of run {state.parent_run_id}: "
            f"`toolwire resume {state.parent_run_id}` resumes it"
        )
    if state.status not in ("waiting_for_approval", "running"):
        raise ValueError(
            f"run {state.run_id} is {state.status}; only a run waiting for approval or left running by a crash (or "
            "Ctrl-C) can be resumed"
        )


class Agent:
    """Runs tasks on one model and one ToolBox under one RunConfig (limits, system prompt, risky tools)."""

    def __init__(
        self, model: Model, toolbox: ToolBox, *, config: RunConfig | None = None, **options: Unpack[AgentOptions]
    ):
        """`config` defaults to the model's (`Agent.of` takes a few loose fields); `options` (AgentOptions) are what
        the caller plugs in, each none when unset."""
        refuse_unknown(options, AgentOptions.__optional_keys__, "Agent()")
        self.model, self.toolbox = model, toolbox
        self.config = config if config is not None else config_for(model)
        self.hooks, self.store = options.get("hooks", ()), options.get("store")
        self.on_step, self.price_fn = options.get("on_step"), options.get("price_fn")
        self.on_elicit = options.get("on_elicit")
        self.risky_tools = set(self.config.risky_tools)
        self.record_config = False
        """Record the run's config afresh when it is driven (the fleet's, for a run as `submit` wrote it: without the
        tools offered); otherwise only a run with none recorded gets it."""
        self._leases: dict[str, Lease] = {}  # run id -> this process's lease on it, while it drives the run
        self.context = ContextKeeper(self.config, kept_results(toolbox, self.config))
        """What each request is sent of its run: long results kept out, the context budget (context/keeper.py)."""
        self.model = prepared(model, self.context.native, self.context.budget)  # the provider's context editing
        plans = self.config.plan, self.config.workflow, self.config.review
        self.strategies = Strategies(*plans, self._aside, self._end_step, self._save)
        """What follows a text answer: a plan's or workflow's next step, a replan, a review (strategies/seam.py)."""

    @classmethod
    def of(
        cls,
        model: Model,
        toolbox: ToolBox,
        *,
        name: str = "agent",
        system: str | None = None,
        limits: RunLimits | None = None,
        risky_tools: set[str] | None = None,
        **options: Unpack[AgentOptions],
    ) -> "Agent":
        """An Agent whose config is made of these loose fields (`config_for`); the options as for the Agent."""
        return cls(model, toolbox, config=config_for(model, name, system, limits, risky_tools), **options)

    @property
    def limits(self) -> RunLimits:
        return self.config.limits

    async def run(self, task: str, run_id: str | None = None, parent: tuple[str, str] | None = None) -> RunState:
        """A new run of `task`; the config (with the tools offered) is saved with every checkpoint. `parent`: the run
        and delegate call id a sub-agent's run was started by."""
        state = open_run(task, self.config, model=self.model.model, run_id=run_id, parent=parent)
        return await self._drive(state)

    async def resume(self, state_or_run_id: RunState | str) -> RunState:
        """Continue a run that waits for approval or crashed mid-step.

        Approved calls whose arguments still hash the same run once; rejected ones are answered with the person's
        reason; calls left `sent` by a crash are sent again only if idempotent (same key), else answered
        `outcome_unknown`. Then the loop goes on. Raises ValueError for a run that has ended.
        """
        state = state_or_run_id
        if isinstance(state, str):
            if self.store is None:
                raise ValueError("resume by run id needs a store; pass store= to the Agent")
            state = await self.store.load(state)
        check_resumable(state)
        return await self._drive(state, resuming=True)

    # ---- the core -------------------------------------------------------------------------------------------
    async def _drive(self, state: RunState, resuming: bool = False) -> RunState:
        resumed_from = state.trace_id if resuming else None
        on_record = resuming and state.status == "running" and not state.steps and not state.pending  # as submitted
        with agent_span(self.config.name, state.run_id, self.model.model, resumed_from=resumed_from) as span:
            state.trace_id = state.trace_id or format(span.get_span_context().trace_id, "032x")
            state.status = "running"
            async with self.toolbox.opened():
                if not state.config or self.record_config:  # the tools offered, listed; the instructions joined
                    state.config = recorded_config(self.config, self.toolbox.specs, state.run_id)
                    join_instructions(state, self.toolbox.instructions)
                self.toolbox.restore(last_loaded(state))  # what this run's tool search loaded (a new run: none)
                if resuming:
                    await self.toolbox.recall_links(r for step in state.steps for r in step.results)
                try:
                    await self._drive_held(state, resuming, span, on_record)
                finally:
                    self.context.forget(state.run_id)
        return state

    async def _drive_held(self, state: RunState, resuming: bool, span: Span, on_record: bool) -> None:
        """The run under this process's lease: the loop, the exit, and the last save."""
        async with held(self.store, state, self._leases) as lease:
            try:
                if not on_record:
                    await self._save(state)  # the run is on record before its first model call
                await self._loop(state, resuming)
            except exits.RunExit as exit_:
                self._close_turn(state, exit_)
                exits.finish(state, exit_)
            record_run_end(span, state.usage, state.status, state.stop_reason)
            record_agent_content(span, state.messages, state.final_answer)
            if lease is None or lease.lost is None:  # a driver that lost the run saves nothing over it
                await checkpoint.save_last(self.store, state, lease)

    async def _loop(self, state: RunState, resuming: bool) -> None:
        """Steps until an exit is raised; the wall-clock limit is this scope's own deadline."""
        started = time.perf_counter()
        calls = self._calls()  # the Agent's parts do not change while it drives a run
        with anyio.move_on_after(self.limits.max_wall_s):
            if resuming:
                await calls.settle(state)
            if state.plan is None:
                await self.strategies.start(state)
            while True:
                await self._step(state, calls)
        took = time.perf_counter() - started
        raise exits.WallClock(
            f"stopped by the wall-clock limit of {self.limits.max_wall_s:g} s after {took:.1f} s "
            f"and {counted(len(state.steps), 'step')}"
        )

    async def _step(self, state: RunState, calls: TurnCalls) -> None:
        lease = self._leases.get(state.run_id)
        if lease is not None:
            lease.check()
        try:
            state.check_order()
            context = self.context
            if context.budget is None:
                sent, mark = context.unbudgeted(state)
            else:
                sent, mark = await context.request(
                    state, self.toolbox.specs, lambda asked, native: self._compact(state, asked, native)
                )
        except MessageOrderError as exc:  # the list, or the view of it a context budget made
            raise exits.HarnessFailed(f"stopped before sending a malformed request: {exc}") from exc
        changed = await self._refresh_tools(state)
        cap = self._check_limits(state, sent)
        split = self.context.split_for
        step = await ask_model(self.model, self.toolbox.specs, state, cap, "act", self.price_fn, sent, split)
        step.tools = list(self.toolbox.specs) if changed else None
        if step.model_reply is not None and step.model_reply.found_tools:  # the provider's own tool search
            self.toolbox.load(step.model_reply.found_tools)
        step.view = mark
        budget.check_spent(self.limits, state)
        if not step.tool_calls:
            if await self.strategies.goes_on(state, step):
                return
            raise exits.FinalAnswer(step.model_text, len(state.steps))
        await calls.act(state, step)
        append_results(state, step)
        self._end_step(state, step)
        if self.store is not None:
            await self._save(state)

    def _close_turn(self, state: RunState, exit_: exits.RunExit) -> None:
        """Where a step ends on an exit. Unless the run waits for a person, every call of the last turn gets a result
        (a call left `sent` has an unknown outcome, the others were not run), so the saved message list is always a
        valid request."""
        if not state.steps:
            return
        step = state.steps[-1]
        if not isinstance(exit_, exits.WaitingForApproval):
            answer_the_rest(state, step, exit_.why)
        if step.finished_at is None:
            self._end_step(state, step)

    # ---- limits ---------------------------------------------------------------------------------------------
    def _check_limits(
        self, state: RunState, sent: list[Message] | None = None, specs: list[ToolSpec] | None = None
    ) -> int | None:
        """Raise the exit a limit calls for; else the output cap the budgets leave for the next reply (to the
        request `sent`, by default the run's whole list, with `specs`, by default the tools offered)."""
        limits = self.limits
        if state.steps_taken >= limits.max_steps:
            raise exits.StepLimit(f"stopped at the step limit after {counted(state.steps_taken, 'step')}")
        if limits.max_tokens is None and limits.max_cost_usd is None:
            return None
        prompt = estimate_prompt(
            state.messages if sent is None else sent, self.toolbox.specs if specs is None else specs
        )
        return budget.output_cap(self.limits, state, prompt, self.price_fn)

    async def _compact(self, state: RunState, request: list[Message], native: NativeForm | None) -> StepRecord:
        """The context budget's side exchange: the run's model summarises older turns, a compact step of the run
        (its tokens and cost counted, limits checked before it), whose reply never joins the run's list. With a
        native form the provider's own compaction answers, sent the run's tools as the turns were."""
        specs = self.toolbox.specs if native is not None else []
        cap = self._check_limits(state, request, specs)
        most = summary_cap(self.config.context_budget or 0) if native is None else NATIVE_SUMMARY_TOKENS
        model = self.model if native is None else compactor(self.model, native)
        split = _own_split
        step = await ask_model(
            model, specs, state, most if cap is None else min(cap, most), "compact", self.price_fn, request, split
        )
        step.tool_calls = []  # offered no tools: a call it made anyway is not the run's
        budget.check_spent(self.limits, state)
        self._end_step(state, step)
        return step

    # ---- the strategies' side exchange (strategies/seam.py) -------------------------------------------------
    async def _aside(
        self, state: RunState, kind: StepKind, request: str, parse: Callable[[str], T], optional: bool = False
    ) -> tuple[StepRecord, T] | None:
        """A side question to the model (a plan, a review): the request as a user turn, the reply as a step of
        `kind` whose tool calls are answered, never run, and the reply's text parsed. When the limits leave no room
        for it the request goes unsent, and the limit's exit is raised (None when the question was `optional`)."""
        state.messages.append(UserMessage(content=request))
        sent, mark = self.context.view(state)
        try:
            cap = self._check_limits(state, sent)
        except exits.RunExit:
            state.messages.pop()  # unsent: the list ends where the last exchange ended
            if optional:
                return None
            raise
        split = self.context.split_for
        reply = await ask_model(self.model, self.toolbox.specs, state, cap, kind, self.price_fn, sent, split)
        reply.view = mark
        budget.check_spent(self.limits, state)
        no_tools = texts.PLAN_NO_TOOLS if kind == "plan" else texts.REVIEW_NO_TOOLS
        reply.results = [failed(c.id, c.name, "blocked", no_tools) for c in reply.tool_calls]
        append_results(state, reply)
        return reply, parse(reply.model_text)

    # ---- the tools ------------------------------------------------------------------------------------------
    def _calls(self) -> TurnCalls:
        """The policy for a turn's calls, on the Agent's parts as they are now (the fleet swaps in step wrappers)."""
        why, children = self._why_risky, SubAgents(self)
        lent = LentModel(self.model, self.limits, self.price_fn)  # for servers allowed to sample (tools/sampling.py)
        return TurnCalls(
            self.toolbox, self.store, self.hooks, self.limits, why, self._save, children, self.on_elicit, lent
        )

    def _why_risky(self, call: ToolCall) -> str | None:
        route = self.toolbox.route(call.name)
        if route is None:
            return approval_reason(call, None, self.risky_tools, frozenset({call.name}))
        if route.loads_only:  # a tool search loads it and runs nothing: asked when called again
            return None
        # route.aliases: what `--risky` names (the model calls it by its wire name)
        return approval_reason(call, route.spec, self.risky_tools, route.aliases)

    def _end_step(self, state: RunState, step: StepRecord) -> None:
        in_call_order(step)
        step.finished_at = now()
        step.loaded = self.toolbox.loaded
        if self.on_step:
            self.on_step(state, step)

    def _refresh_tools(self, state: RunState) -> Awaitable[bool]:
        """Before a model call: the tools of a server that said its list changed listed again (True: the model is
        offered other tools than on the step before). Replay overrides it to offer what the recorded step saw. (The
        ToolBox's own coroutine, awaited by the loop: no frame of its own.)"""
        return self.toolbox.refresh()

    # ---- plumbing -------------------------------------------------------------------------------------------
    async def _save(self, state: RunState) -> None:
        if self.store is not None:  # a run without a store is saved nowhere (twice a step for nothing)
            await checkpoint.save(self.store, state, self._leases.get(state.run_id))


def _own_split(state: RunState) -> Split:
    """A compact step's count of where its request's tokens went: its own, not the run's."""
    return SplitCounter().split


def last_loaded(state: RunState) -> list[str]:
    """The tools a tool search had loaded when the run's last step ended (none without tool search)."""
    return next((step.loaded for step in reversed(state.steps) if step.loaded is not None), [])


def join_instructions(state: RunState, instructions: list[tuple[str, str]]) -> None:
    """A new run's opening system message gets the servers' `instructions` after the run's own system prompt
    (saved with the messages: a resume and a replay send the same prompt)."""
    parts = [texts.server_instructions(name, text) for name, text in instructions]
    if not parts:
        return
    first = state.messages[0] if state.messages else None
    if isinstance(first, SystemMessage):
        state.messages[0] = replace(first, content="\n\n".join([first.content, *parts]))
    else:
        state.messages.insert(0, SystemMessage(content="\n\n".join(parts)))


def recorded_config(config: RunConfig, specs: list[ToolSpec], run_id: str) -> dict[str, Any]:
    """The config as saved with the run: with the tool definitions offered, so replay offers the same ones;
    sealed, so a resume can tell it from one written into the store by anybody else (seal.py)."""
    dumped = config.model_dump(mode="json", exclude={"tools"})
    tools = [spec_json(spec) for spec in specs]  # one dict per spec, shared by the runs offered it
    recorded = {  # in the order of a whole dump
        name: tools if name == "tools" else dumped[name]
        for name in RunConfig.model_fields
        if name == "tools" or name in dumped
    }
    return seal.sealed(run_id, recorded)


class SubAgents:
    """Implements ChildRuns for the runs of one Agent: a sub-agent is a second Agent on the parent's model, store,
    hooks and prices, over a view of the parent's started ToolBox offering only the tools named."""

    def __init__(self, parent: Agent) -> None:
        self.parent = parent

    @property
    def config(self) -> RunConfig:
        return self.parent.config

    @property
    def specs(self) -> list[ToolSpec]:
        return self.parent.toolbox.specs

    @property
    def store(self) -> RunStore | None:
        return self.parent.store

    async def start(
        self, config: RunConfig, tools: list[str], task: str, run_id: str, parent: tuple[str, str]
    ) -> RunState:
        return await self._agent(config, tools).run(task, run_id, parent=parent)

    async def resume(self, config: RunConfig, tools: list[str], state: RunState) -> RunState:
        return await self._agent(config, tools).resume(state)

    def script_calls(self, state: RunState) -> AbstractAsyncContextManager[ScriptTurns]:
        """A code-mode script's run (script_turns.py), its calls on the parent's pipeline and tools."""
        p = self.parent
        return script_driven(state, p._calls(), p.store, p._leases, p.on_step)

    def _agent(self, config: RunConfig, tools: list[str]) -> Agent:
        p = self.parent
        view = p.toolbox.narrowed(tools)
        return Agent(
            p.model, view, config=config, store=p.store, hooks=p.hooks, price_fn=p.price_fn, on_elicit=p.on_elicit
        )
