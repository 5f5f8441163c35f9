"""What happens to the tool calls of one turn, and to the calls a paused or crashed run left behind.

`TurnCalls.act` answers repeats and calls the running workflow step does not allow, runs the other safe calls at
once (marked `sent` and saved before, each with its own timeout, through the hooks) and pauses the run while a risky
call waits for approval; a call whose tool asked a person a question (MCP elicitation) pauses it the same way, and is
sent again with the answer. `TurnCalls.settle`, on resume, runs approved and answered calls once, answers rejected
ones, and sends a call left `sent` by a crash again only if it is idempotent. A risky call runs only on the store's
record of an approval of exactly that call, whatever the saved state says.

The Agent hands in its parts (toolbox, store, hooks, limits, what is risky, how to save); nothing here reaches back
into it."""

from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from functools import partial

import anyio

from toolwire_client import texts
from toolwire_client.run import exits
from toolwire_client.run.hooks import ToolHook, run_after, run_before
from toolwire_client.run.limits import RunLimits
from toolwire_client.run.pending import PendingCall
from toolwire_client.run.state import RunState, SamplingRecord, StepRecord
from toolwire_client.store.answers import on_record
from toolwire_client.store.approval_rules import NotApproved, answer_without_running
from toolwire_client.store.base import RunStore
from toolwire_client.strategies.plan import off_step_calls
from toolwire_client.tools.source import ChildRuns, LentModel, RunContext
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.elicitation import OnElicit
from toolwire_shared.messages import AssistantMessage, ToolCall, ToolResultMessage
from toolwire_shared.results import ToolResult, failed
from toolwire_shared.tools import ToolSpec
from toolwire_shared.words import counted

Save = Callable[[RunState], Awaitable[None]]
WhyRisky = Callable[[ToolCall], str | None]
"""Why a call needs a person's approval before it runs (the reason saved with the pending call), or None."""

NAMED_RISKY = "named with --risky"
MARKED_RISKY = "marked risky by its server"
DESTRUCTIVE = "destructive per the server's annotations"


def approval_reason(
    call: ToolCall, spec: ToolSpec | None, risky_tools: set[str] | frozenset[str], names: frozenset[str] = frozenset()
) -> str | None:
    """Why `call` waits for approval, or None: named with `--risky` (whatever the server's hints say: a
    `readOnlyHint` never removes it), toolwire's own `risky=True` of its server, or a server's annotations that say
    destructive (`destructiveHint: true`, not `readOnlyHint: true`) unless the user trusts that server.
    `names`: every name the user may know the tool by, when the model calls it by another (its wire name): bound to
    the one server's tool the call goes to (ToolBox.aliases)."""
    if call.name in risky_tools or not names.isdisjoint(risky_tools):
        return NAMED_RISKY
    if spec is None:
        return None
    if spec.policy.risky:
        return MARKED_RISKY
    if spec.policy.destructive_hint and not spec.policy.trusted:
        return DESTRUCTIVE
    return None


class TurnCalls:
    """The calls of one turn: the repeat guard, off-step and risky calls, authorisation, hooks, concurrency."""

    def __init__(
        self,
        toolbox: ToolBox,
        store: RunStore | None,
        hooks: tuple[ToolHook, ...],
        limits: RunLimits,
        why_risky: WhyRisky,
        save: Save,
        children: ChildRuns | None = None,
        on_elicit: OnElicit | None = None,
        lent: LentModel | None = None,
    ):
        self.toolbox, self.store, self.hooks, self.limits = toolbox, store, hooks, limits
        self.why_risky, self.save, self.children = why_risky, save, children
        self.on_elicit, self.lent = on_elicit, lent
        self._saving: anyio.Lock | None = None  # made on first use: most turns start no task (a lock costs µs)
        self._context: RunContext | None = None
        """The last run's context: the same for every call of every turn of one run (a TurnCalls is made per run
        driven)."""

    def is_risky(self, call: ToolCall) -> bool:
        return self.why_risky(call) is not None

    async def act(self, state: RunState, step: StepRecord) -> None:
        """Answer repeats and off-step calls, run the safe calls concurrently, and pause if a risky call is left."""
        repeats = self._repeats(state, step.tool_calls)
        if repeats and self.limits.on_repeat == "stop":
            call, times = repeats[0]
            raise exits.RepeatedCall(f"stopped by a repeated call: {call.signature} asked for the {_nth(times)} time")
        for call, times in repeats:
            step.results.append(failed(call.id, call.name, "blocked", texts.repeated(call.signature, times)))
        off_step = off_step_calls(state.plan, step.tool_calls) if state.plan is not None else None
        if off_step:
            repeated = {c.id for c, _ in repeats}
            step.results.extend(r for r in off_step if r.call_id not in repeated)
        answered: Collection[str] = {r.call_id for r in step.results} if step.results else ()
        to_run: list[ToolCall] = []
        risky: list[ToolCall] = []
        why_risky = self.why_risky
        for c in step.tool_calls:
            if c.id not in answered:
                (to_run if why_risky(c) is None else risky).append(c)
        await self._run(state, step, to_run)
        if risky:
            state.pending.extend(self.asking_approval(c) for c in risky)
        if state.pending:
            _pause_if_waiting(state)

    async def settle(self, state: RunState) -> None:
        """On resume: answer the last turn's calls from the decisions on its pending calls, then let the loop go on."""
        last = state.messages[-1] if state.messages else None
        if not isinstance(last, AssistantMessage) or not last.tool_calls:
            state.pending = []
            return
        waiting = [p.call.name for p in state.pending if p.waits_for_approval]
        if waiting:
            raise exits.WaitingForApproval(f"still waiting for approval: {', '.join(waiting)}")
        unanswered = [p.call.name for p in state.pending if p.waits_for_input]
        if unanswered:
            raise exits.WaitingForApproval(f"still waiting for input: {', '.join(unanswered)} (`toolwire answer`)")
        step, asked = state.steps[-1], {c.id: c for c in last.tool_calls}
        answered = {r.call_id for r in step.results}
        to_run: list[ToolCall] = []
        for p in (p for p in state.pending if p.call.id in asked):
            if p.call != asked[p.call.id]:
                why = f"its saved pending copy is not the call the model asked for ({asked[p.call.id].signature})"
                if self.store is not None:
                    await self.store.flag_tampered(state.run_id, asked[p.call.id], why)
                raise exits.Tampered(f"stopped before running {p.call.name}: {why}, so the saved run was changed")
            by_record = self.store is not None and (p.is_approved or (p.is_sent and self.is_risky(p.call)))
            answer = (  # the record, not the state, says what was approved and sent; a task is followed, not re-run;
                None if by_record or p.task_id or p.is_answered else answer_without_running(p)
            )  # an answered call is sent with its answer
            if p.is_answered and not await on_record(self.store, state.run_id, p):
                why = "its answer is not the one `toolwire answer` recorded"
                if self.store is not None:
                    await self.store.flag_tampered(state.run_id, asked[p.call.id], why)
                raise exits.Tampered(f"stopped before sending {p.call.name} again: {why}, so the saved run was changed")
            if answer is None:
                to_run.append(asked[p.call.id])  # the call the model asked for, as the approval record binds it
            elif p.call.id not in answered:
                step.results.append(answer)
        answered |= {r.call_id for r in step.results} | {c.id for c in to_run}
        unrecorded = [c for c in last.tool_calls if c.id not in answered]
        if any(self.is_risky(c) for c in unrecorded):  # never sent and never asked for approval: ask now
            state.pending += [self.asking_approval(c) for c in unrecorded if self.is_risky(c)]
            raise exits.WaitingForApproval(f"waiting for approval: {', '.join(c.name for c in unrecorded)}")
        approved = frozenset(p.call.id for p in state.pending if p.is_approved)
        await self._run(state, step, to_run + unrecorded, approved)
        state.pending = [p for p in state.pending if p.outlives_the_turn]
        _pause_if_waiting(state)
        append_results(state, step)
        await self.save(state)

    def idempotent(self, call: ToolCall) -> bool:
        """May it be sent again after a crash? Only when its server says so (an untrusted one's idempotentHint does
        not count)."""
        spec = self.toolbox.spec(call.name)
        return spec is not None and spec.policy.resend_ok

    def asking_approval(self, call: ToolCall) -> PendingCall:
        return PendingCall.asking_approval(call, self.why_risky(call), self.idempotent(call))

    def _repeats(self, state: RunState, calls: list[ToolCall]) -> list[tuple[ToolCall, int]]:
        """Calls of this turn asked for repeat_limit times or more, counting every earlier turn of the run."""
        return state.derived.asked.repeats(state.messages, calls, self.limits.repeat_limit)

    async def _run(
        self, state: RunState, step: StepRecord, calls: list[ToolCall], approved: frozenset[str] = frozenset()
    ) -> None:
        """All at once, marked `sent` before; each call has its own timeout and never cancels a sibling. A result
        joins the step as soon as it is in, so an exit mid-turn keeps what already came back."""
        if not calls:
            return
        before = {p.call.id: p for p in state.pending} if state.pending else {}
        answered: frozenset[str] = frozenset(i for i, p in before.items() if p.is_answered) if before else frozenset()
        if self.store is not None:  # checked against the store's records: there are none without one
            calls = await self._authorized(state, step, calls, approved, answered)
        ids = {c.id for c in calls}
        if step.results and any(r.call_id in ids for r in step.results):  # a call sent again replaces what it had
            step.results = [r for r in step.results if r.call_id not in ids]
        asked = state.derived.asked  # the arguments' hashes the repeat guard made
        sent = [PendingCall.sending(c, self.idempotent(c), before.get(c.id), asked.args_hash(c)) for c in calls]
        state.pending[:] = [p for p in state.pending if p.call.id not in ids] + sent if state.pending else sent
        if self.store is not None:  # saved nowhere without one: no save awaited for nothing
            try:
                await self.save(state)
            except exits.SaveFailed:
                state.pending = [p for p in state.pending if p.call.id not in ids]  # never sent: the exit says not run
                raise

        run, hooks = self._run_context(state), self.hooks  # the same for every call of the turn

        async def one(call: ToolCall) -> None:
            if hooks:
                result = await self._call_with_hooks(run, call)
            else:  # most runs have none: no frame of its own
                result = _applied(run, await self.toolbox.call(call, run, timeout_s=self.limits.tool_timeout_s))
            pending = state.pending  # changed in place: the calls beside it take theirs out of the same list
            for n, p in enumerate(pending):
                if p.call.id == call.id:
                    sent = pending.pop(n)
                    break
            else:
                sent = PendingCall.sending(call, self.idempotent(call))
            if result.sub_run is not None and result.sub_run.status == "waiting_for_approval":  # so does this call
                state.pending.append(sent.waits_on(result.sub_run.run_id))
            elif result.input_wanted is not None:  # its tool asked a person: the run waits for `toolwire answer`
                state.pending.append(sent.asks(result.input_wanted))
            else:
                step.results.append(result)

        if len(calls) == 1:  # nothing to run beside it: no task group to pay for
            await one(calls[0])
            return
        async with anyio.create_task_group() as group:
            for call in calls:
                group.start_soon(one, call)

    async def _authorized(
        self,
        state: RunState,
        step: StepRecord,
        calls: list[ToolCall],
        approved: frozenset[str],
        answered: frozenset[str] = frozenset(),
    ) -> list[ToolCall]:
        """A risky call (or one the saved state calls `approved`) runs only on the store's record of an approval of
        exactly this call, whatever the saved state says; one sent before is sent again only if idempotent, or when
        it is `answered` (its send ended on the tool's question, so its outcome is known)."""
        if self.store is None:
            return calls
        allowed = []
        tasks = {p.call.id for p in state.pending if p.task_id}
        for call in calls:
            if call.id in tasks:  # its task was created on an authorised send: following it runs nothing new
                allowed.append(call)
                continue
            if not self.is_risky(call) and (call.id not in approved or call.id in answered):
                allowed.append(call)
                continue
            try:
                found = await self.store.authorize(state.run_id, call, self.idempotent(call))
            except NotApproved as exc:
                raise exits.Tampered(
                    f"stopped before running {call.signature}: {exc}, so the saved run was changed (nothing was run)"
                ) from exc
            if found == "sent_before" and call.id not in answered:
                step.results.append(failed(call.id, call.name, "outcome_unknown", texts.outcome_unknown(call.name)))
            else:
                allowed.append(call)
        return allowed

    def _run_context(self, state: RunState) -> RunContext:
        """What a source may need of this run."""
        context = self._context
        if context is not None and context.state is state:
            return context
        self._context = context = RunContext(
            state.run_id,
            state,
            self.children,
            note_task=partial(self._note_task, state),
            on_elicit=self.on_elicit,
            model=self.lent,
            sampled=RunSampling(state),
        )
        return context

    async def _call_with_hooks(self, run: RunContext, call: ToolCall) -> ToolResult:
        checked = await run_before(self.hooks, call)
        if isinstance(checked, ToolResult):
            return checked
        result = _applied(run, await self.toolbox.call(checked, run, timeout_s=self.limits.tool_timeout_s))
        return await run_after(self.hooks, checked, result)

    async def _note_task(self, state: RunState, call_id: str, task_id: str) -> None:
        """Save the task id in the call's pending entry before the task is followed (a crash then resumes it)."""
        for p in state.pending:
            if p.call.id == call_id:
                p.task_id = task_id
        if self._saving is None:
            self._saving = anyio.Lock()
        async with self._saving:  # calls of one turn run at once: their saves go one at a time
            await self.save(state)


@dataclass(frozen=True, slots=True)
class RunSampling:
    """The loop's side of MCP sampling (tools/sampling.py): a server's requests recorded in the run as they come, an
    answer's usage and cost added to its totals (the next request's budget check sees them)."""

    state: RunState

    def record(self, request: SamplingRecord) -> None:
        self.state.sampling.append(request)

    def charge(self, request: SamplingRecord) -> None:
        state = self.state
        state.usage = state.usage + request.usage
        if request.cost_usd is not None:
            state.cost_usd = (state.cost_usd or 0.0) + request.cost_usd


def _applied(run: RunContext, result: ToolResult) -> ToolResult:
    """What the source says happened, applied to the run by the loop (a source never writes it): the sub-agent a
    delegate call ran is counted in the run's totals, as far as it got (before a hook sees the result)."""
    if result.sub_run is not None and run.state is not None:
        run.state.count_child(result.call_id, result.sub_run)
    return result


def append_results(state: RunState, step: StepRecord) -> None:
    """The step's results in the model's call order, and one result message for each call not yet answered."""
    in_call_order(step)
    present = set()
    for message in reversed(state.messages):
        if not isinstance(message, ToolResultMessage):
            break
        present.add(message.call_id)
    state.messages.extend([_result_message(r) for r in step.results if r.call_id not in present])


def _result_message(result: ToolResult) -> ToolResultMessage:
    """What the model reads of a result (its media list shared: neither record is changed in place)."""
    return ToolResultMessage(
        call_id=result.call_id, name=result.name, content=result.content, is_error=result.is_error, media=result.media
    )


def answer_the_rest(state: RunState, step: StepRecord, why: str) -> None:
    """On an exit: every call of the turn not answered yet gets a result (a call left `sent` has an unknown outcome,
    the others were not run, for `why`) and none is pending any more."""
    answered, sent = {r.call_id for r in step.results}, {p.call.id for p in state.pending if p.is_sent}
    for call in (c for c in step.tool_calls if c.id not in answered):
        if call.id in sent:
            step.results.append(failed(call.id, call.name, "outcome_unknown", texts.outcome_unknown(call.name)))
        else:
            step.results.append(failed(call.id, call.name, "blocked", texts.not_run(why)))
    state.pending = []
    append_results(state, step)


def in_call_order(step: StepRecord) -> None:
    if len(step.results) < 2:
        return
    order = {c.id: n for n, c in enumerate(step.tool_calls)}
    step.results.sort(key=lambda r: order.get(r.call_id, len(order)))


def _pause_if_waiting(state: RunState) -> None:
    """Stop for a person while a call waits for approval, here or in a sub-agent (a delegate call), or for an answer
    to its tool's question."""
    waiting = [p.call.signature for p in state.pending if p.waits_for_approval_here_or_below]
    if waiting:
        raise exits.WaitingForApproval(
            f"waiting for approval after {counted(len(state.steps), 'step')}: {', '.join(waiting)}"
        )
    asked = [f"{p.call.signature}: {p.input.message}" for p in state.pending if p.waits_for_input and p.input]
    if asked:
        raise exits.WaitingForApproval(
            f"waiting for input after {counted(len(state.steps), 'step')}: {'; '.join(asked)}"
        )


def _nth(n: int) -> str:
    """An ordinal for a repeat, which is at least the second time (RunLimits.repeat_limit is 2 or more)."""
    words = {2: "second", 3: "third", 4: "fourth", 5: "fifth"}
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return words.get(n, f"{n}{suffix}")
