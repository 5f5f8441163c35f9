"""The agent loop: ask the model, append its turn, run the calls it asked for, append the results, until an exit.

The core is `_drive` and `_step`; each limit, the concurrent calls and the checkpoints are small helpers below.
"""

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import anyio

from toolwire_client import exits as X
from toolwire_client.hooks import ToolHook, run_after, run_before
from toolwire_client.models.base import Model, ModelCallFailed
from toolwire_client.ordering import MessageOrderError, check_order
from toolwire_client.state import CallState, PendingCall, RunState, StepRecord, args_hash, now
from toolwire_client.store.base import RunStore
from toolwire_client.tokens import estimate_prompt
from toolwire_client.tools.toolbox import ToolBox
from toolwire_otel import attributes as A
from toolwire_otel.content import record_agent_content, record_chat_content
from toolwire_otel.spans import agent_span, chat_span, record_chat_response, record_run_end
from toolwire_shared.ids import new_run_id
from toolwire_shared.messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolResultMessage, UserMessage
from toolwire_shared.results import ToolResult
from toolwire_shared.usage import Usage

PriceFn = Callable[[Usage], float | None]
OnStep = Callable[[RunState, StepRecord], None]


class Agent:
    def __init__(
        self,
        model: Model,
        toolbox: ToolBox,
        *,
        name: str = "agent",
        system: str | None = None,
        limits: X.Limits | None = None,
        hooks: tuple[ToolHook, ...] = (),
        store: RunStore | None = None,
        risky_tools: set[str] | None = None,
        on_step: OnStep | None = None,
        price_fn: PriceFn | None = None,
    ):
        self.model, self.toolbox, self.name, self.system = model, toolbox, name, system
        self.limits = limits or X.Limits()
        self.hooks, self.store, self.on_step, self.price_fn = hooks, store, on_step, price_fn
        self.risky_tools = risky_tools or set()
        self._seen: dict[str, Counter[str]] = {}  # run id -> how often each call was asked for (repeat guard)

    async def run(self, task: str, run_id: str | None = None, config: dict[str, Any] | None = None) -> RunState:
        """A new run of `task`; `config` (how to rebuild this agent elsewhere) is saved with every checkpoint."""
        opening: list[Message] = [SystemMessage(content=self.system)] if self.system else []
        state = RunState(
            run_id=run_id or new_run_id(),
            agent_name=self.name,
            task=task,
            model=self.model.model,
            messages=[*opening, UserMessage(content=task)],
            config=config or {},
        )
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
        if state.status not in ("waiting_for_approval", "running"):
            raise ValueError(
                f"run {state.run_id} is {state.status}; only a run waiting for approval or left "
                "running by a crash can be resumed"
            )
        return await self._drive(state, resuming=True)

    # ---- the core -------------------------------------------------------------------------------------------
    async def _drive(self, state: RunState, resuming: bool = False) -> RunState:
        resumed_from = state.trace_id if resuming else None
        with agent_span(self.name, state.run_id, self.model.model, resumed_from=resumed_from) as span:
            state.trace_id = state.trace_id or format(span.get_span_context().trace_id, "032x")
            state.status = "running"
            started = time.perf_counter()
            try:
                await self._save(state)  # the run is on record before its first model call
                async with self._tools_open():
                    with anyio.fail_after(self.limits.max_wall_s):
                        if resuming:
                            await self._settle_pending(state)
                        while True:
                            await self._step(state)
            except X.RunExit as exit_:
                X.finish(state, exit_)
            except TimeoutError:
                took = time.perf_counter() - started
                X.finish(
                    state,
                    X.WallClock(
                        f"stopped by the wall-clock limit of {self.limits.max_wall_s:g} s "
                        f"after {took:.1f} s and {len(state.steps)} steps"
                    ),
                )
            except MessageOrderError as exc:
                X.finish(state, X.HarnessFailed(f"stopped before sending a malformed request: {exc}"))
            self._seen.pop(state.run_id, None)
            record_run_end(span, state.usage, state.status, state.stop_reason)
            record_agent_content(span, state.messages, state.final_answer)
            await self._save(state)
        return state

    async def _step(self, state: RunState) -> None:
        self._check_limits(state)
        check_order(state.messages)
        step = await self._ask_model(state)
        if not step.tool_calls:
            self._end_step(state, step)
            raise X.FinalAnswer(step.model_text, len(state.steps))
        results = await self._act(state, step)
        self._append_results(state, step, results)
        self._end_step(state, step)
        await self._save(state)

    # ---- limits ---------------------------------------------------------------------------------------------
    def _check_limits(self, state: RunState) -> None:
        lim, n = self.limits, len(state.steps)
        if n >= lim.max_steps:
            raise X.StepLimit(f"stopped at the step limit after {n} steps")
        if lim.max_tokens is None and lim.max_cost_usd is None:
            return
        next_usage = Usage(
            input_tokens=estimate_prompt(state.messages, self.toolbox.specs), output_tokens=lim.output_reserve_tokens
        )
        spent = state.usage.total_tokens
        if lim.max_tokens is not None and spent + next_usage.total_tokens > lim.max_tokens:
            raise X.TokenBudget(
                f"stopped by the token budget before step {n + 1}: {spent} tokens spent, the next "
                f"call needs about {next_usage.total_tokens} more, budget {lim.max_tokens}"
            )
        price = self.price_fn(next_usage) if self.price_fn else None
        if lim.max_cost_usd is not None and price is not None and (state.cost_usd or 0) + price > lim.max_cost_usd:
            raise X.CostBudget(
                f"stopped by the cost budget before step {n + 1}: {state.cost_usd or 0:.4f} USD "
                f"spent, the next call costs about {price:.4f}, budget {lim.max_cost_usd:g} USD"
            )

    # ---- the model ------------------------------------------------------------------------------------------
    async def _ask_model(self, state: RunState) -> StepRecord:
        m = self.model
        with chat_span(m.provider, m.model, state.run_id, m.server_address, m.server_port) as span:
            span.set_attribute(A.TOOLWIRE_STEP, len(state.steps) + 1)
            try:
                reply = await m.complete(state.messages, self.toolbox.specs)
            except ModelCallFailed as exc:
                raise X.ModelFailed(f"stopped because the model call failed: {exc.reason}") from exc
            record_chat_response(span, reply.usage, reply.response_model, reply.response_id, reply.finish_reason)
            record_chat_content(span, state.messages, self.toolbox.specs, reply.message, reply.finish_reason)
        state.messages.append(reply.message)
        state.usage = state.usage + reply.usage
        cost = self.price_fn(reply.usage) if self.price_fn else None
        if cost is not None:
            state.cost_usd = (state.cost_usd or 0.0) + cost
        step = StepRecord(
            index=len(state.steps) + 1,
            model_text=reply.message.text,
            tool_calls=list(reply.message.tool_calls),
            usage=reply.usage,
            usage_so_far=state.usage,
            cost_usd=cost,
            model_latency_s=reply.latency_s,
            model_reply=reply.model_dump(mode="json"),
        )
        state.steps.append(step)
        return step

    # ---- the tools ------------------------------------------------------------------------------------------
    async def _act(self, state: RunState, step: StepRecord) -> dict[str, ToolResult]:
        """Answer repeats, run the safe calls concurrently, and pause if a risky call is left."""
        repeats = self._repeats(state, step.tool_calls)
        if repeats and self.limits.on_repeat == "stop":
            call, times = repeats[0]
            why = f"stopped by a repeated call: {X.call_text(call)} asked for the {_nth(times)} time"
            # Answer every call of the turn (none ran), so the saved message list stays a valid request.
            self._append_results(state, step, {c.id: _not_run(c, why) for c in step.tool_calls})
            self._end_step(state, step)
            raise X.RepeatedCall(why)
        results = {call.id: _repeat_result(call, times) for call, times in repeats}
        risky = [c for c in step.tool_calls if c.id not in results and self._is_risky(c)]
        safe = [c for c in step.tool_calls if c.id not in results and c not in risky]
        results |= await self._run_calls(state, safe)
        if risky:
            step.results = [results[c.id] for c in step.tool_calls if c.id in results]
            state.pending += [self._pending(c, "pending_approval") for c in risky]
            self._end_step(state, step)
            names = ", ".join(X.call_text(c) for c in risky)
            raise X.WaitingForApproval(f"waiting for approval after {len(state.steps)} steps: {names}")
        return results

    def _repeats(self, state: RunState, calls: list[ToolCall]) -> list[tuple[ToolCall, int]]:
        """Calls of this turn asked for repeat_limit times or more, counting every earlier turn of the run."""
        seen = self._seen.get(state.run_id)
        if seen is None:  # first step of this process: count the history once, then keep counting as we go
            seen = self._seen[state.run_id] = Counter(
                X.call_text(c) for m in state.messages[:-1] if isinstance(m, AssistantMessage) for c in m.tool_calls
            )
        found = []
        for call in calls:
            seen[X.call_text(call)] += 1
            if seen[X.call_text(call)] >= self.limits.repeat_limit:
                found.append((call, seen[X.call_text(call)]))
        return found

    def _is_risky(self, call: ToolCall) -> bool:
        spec = self.toolbox.spec(call.name)
        return call.name in self.risky_tools or (spec is not None and spec.policy.risky)

    def _pending(self, call: ToolCall, state: CallState) -> PendingCall:
        spec = self.toolbox.spec(call.name)
        return PendingCall(
            call=call,
            state=state,
            args_hash=args_hash(call.arguments),
            idempotent=bool(spec and spec.policy.idempotent),
        )

    async def _run_calls(self, state: RunState, calls: list[ToolCall]) -> dict[str, ToolResult]:
        """All at once; each call has its own timeout and never cancels a sibling. Marked `sent` before."""
        if not calls:
            return {}
        ids = {c.id for c in calls}
        state.pending = [p for p in state.pending if p.call.id not in ids] + [self._pending(c, "sent") for c in calls]
        await self._save(state)
        results: dict[str, ToolResult] = {}

        async def one(call: ToolCall) -> None:
            results[call.id] = await self._call_with_hooks(state.run_id, call)

        async with anyio.create_task_group() as group:
            for call in calls:
                group.start_soon(one, call)
        state.pending = [p for p in state.pending if p.call.id not in ids]
        return results

    async def _call_with_hooks(self, run_id: str, call: ToolCall) -> ToolResult:
        checked = await run_before(self.hooks, call)
        if isinstance(checked, ToolResult):
            return checked
        result = await self.toolbox.call(checked, run_id=run_id, timeout_s=self.limits.tool_timeout_s)
        return await run_after(self.hooks, checked, result)

    def _append_results(self, state: RunState, step: StepRecord, results: dict[str, ToolResult]) -> None:
        """In the model's call order, matched by id: one result message per call."""
        step.results = [results[c.id] for c in step.tool_calls]
        state.messages += [
            ToolResultMessage(call_id=r.call_id, name=r.name, content=r.content, is_error=r.is_error)
            for r in step.results
        ]

    def _end_step(self, state: RunState, step: StepRecord) -> None:
        step.finished_at = now()
        if self.on_step:
            self.on_step(state, step)

    # ---- resuming -------------------------------------------------------------------------------------------
    async def _settle_pending(self, state: RunState) -> None:
        """Answer the last turn's calls from the decisions on its pending calls, then let the loop go on."""
        last = state.messages[-1] if state.messages else None
        if not isinstance(last, AssistantMessage) or not last.tool_calls:
            state.pending = []
            return
        waiting = [p.call.name for p in state.pending if p.state == "pending_approval"]
        if waiting:
            raise X.WaitingForApproval(f"still waiting for approval: {', '.join(waiting)}")
        step = state.steps[-1]
        results = {r.call_id: r for r in step.results}
        to_run: list[ToolCall] = []
        for p in state.pending:
            answer = _decided(p)
            if answer is None:
                to_run.append(p.call)
            else:
                results[p.call.id] = answer
        unrecorded = [c for c in last.tool_calls if c.id not in results and c not in to_run]
        if any(self._is_risky(c) for c in unrecorded):  # never sent and never asked for approval: ask now
            state.pending += [self._pending(c, "pending_approval") for c in unrecorded if self._is_risky(c)]
            raise X.WaitingForApproval(f"waiting for approval: {', '.join(c.name for c in unrecorded)}")
        to_run += unrecorded
        results |= await self._run_calls(state, to_run)
        state.pending = []
        self._append_results(state, step, results)
        await self._save(state)

    # ---- plumbing -------------------------------------------------------------------------------------------
    def _tools_open(self) -> "_ToolsOpen":
        return _ToolsOpen(self.toolbox)

    async def _save(self, state: RunState) -> None:
        if self.store is not None:
            state.updated_at = now()
            await self.store.save(state)


class _ToolsOpen:
    """Starts the toolbox for the run unless the caller already did, and closes only what it started."""

    def __init__(self, toolbox: ToolBox):
        self.toolbox, self.owned = toolbox, False

    async def __aenter__(self) -> None:
        if not self.toolbox.started:
            await self.toolbox.start()
            self.owned = True

    async def __aexit__(self, *exc: object) -> None:
        if self.owned:
            await self.toolbox.aclose()


def _decided(p: PendingCall) -> ToolResult | None:
    """The result a settled pending call gets without running, or None when it should be (re)sent."""
    from toolwire_shared import errors

    call = p.call
    if p.state == "rejected":
        text = errors.rejected(p.decision_reason or "no reason given")
        return ToolResult(call_id=call.id, name=call.name, content=text, is_error=True, error_kind="rejected")
    if p.state == "approved" and p.args_hash != args_hash(call.arguments):
        text = errors.rejected("the arguments changed after they were approved")
        return ToolResult(call_id=call.id, name=call.name, content=text, is_error=True, error_kind="rejected")
    if p.state == "sent" and not p.idempotent:
        text = errors.outcome_unknown(call.name)
        return ToolResult(call_id=call.id, name=call.name, content=text, is_error=True, error_kind="outcome_unknown")
    return None


def _not_run(call: ToolCall, why: str) -> ToolResult:
    return ToolResult(
        call_id=call.id, name=call.name, content=f"ERROR: not run: {why}", is_error=True, error_kind="blocked"
    )


def _repeat_result(call: ToolCall, times: int) -> ToolResult:
    return ToolResult(
        call_id=call.id, name=call.name, content=X.repeated_text(call, times), is_error=True, error_kind="blocked"
    )


def _nth(n: int) -> str:
    return {1: "first", 2: "second", 3: "third"}.get(n, f"{n}th")
