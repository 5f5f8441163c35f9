"""Replay a saved run with no network, no model and no tool server: the recorded model replies and tool results are
fed back through the same Agent loop, and the path it takes is compared with the recorded one.

Identical means the same calls, in the same order, with the same arguments and observations, the same view of the
run sent each time (results cleared, turns summarised: StepRecord.view), and the same exit.
Otherwise the report names the first step that differs, what was recorded there and what happened instead.
"""

from copy import deepcopy
from dataclasses import dataclass, replace

from toolwire_client import texts
from toolwire_client.config import RunConfig, RunLimits, config_of
from toolwire_client.loop import Agent
from toolwire_client.models.base import ModelCallFailed, ModelReply
from toolwire_client.run.state import RunState, SamplingRecord, StepRecord
from toolwire_client.tools.source import ToolRequest, ToolSource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import Message, ToolCall, UserMessage
from toolwire_shared.results import ToolResult, failed
from toolwire_shared.tools import ToolPolicy, ToolSpec
from toolwire_shared.words import counted

END_OF_RECORD = "replay: the recorded run has no more model replies"


class ReplayModel:
    """Implements Model by handing back the recorded replies in order."""

    provider = "replay"
    server_address: str | None = None
    server_port: int | None = None

    def __init__(self, recorded: RunState):
        self.model = recorded.model
        missing = [s.index for s in recorded.steps if s.model_reply is None]
        if missing:
            raise ValueError(f"run {recorded.run_id} cannot be replayed: steps {missing} have no recorded model reply")
        self._replies = [deepcopy(s.model_reply) for s in recorded.steps if s.model_reply is not None]
        self.calls = 0

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None = None
    ) -> ModelReply:
        if self.calls >= len(self._replies):
            raise ModelCallFailed(END_OF_RECORD)
        reply = self._replies[self.calls]
        self.calls += 1
        return reply

    async def aclose(self) -> None:
        return None


class ReplaySource(ToolSource):
    """A ToolSource: offers the recorded tool specs and answers each call with its recorded result."""

    name = "replay"
    times_out_itself = True  # answers at once from the record

    def __init__(self, specs: list[ToolSpec], results: dict[str, ToolResult]):
        self._specs = specs
        self._results = results
        self.sent: list[ToolCall] = []
        self.sampled: dict[str, list[SamplingRecord]] = {}
        """Call id -> the sampling requests its server made during it, counted again as they were."""
        self.stubs: list[ToolSpec] = []
        """The tools the record called that its first step was not offered (a tool search's, called before it was
        loaded), listed beside every offer so their calls reach the record, which answers them as it was."""
        self.tools_changed = False
        """Set by `offer`: the ToolBox lists this source again before the next model call, as a server's change did."""

    def offer(self, specs: list[ToolSpec]) -> None:
        """From now on, the tools a recorded step was offered after a server's tool list changed (or a tool search
        loaded some)."""
        offered = {spec.name for spec in specs}
        self._specs, self.tools_changed = specs + [s for s in self.stubs if s.name not in offered], True

    async def list_tools(self) -> list[ToolSpec]:
        return self._specs

    async def call(self, request: ToolRequest) -> ToolResult:
        call = request.call
        self.sent.append(call)
        recorded = self._results.get(call.id)
        if recorded is None or recorded.name != call.name:
            return failed(call.id, call.name, "tool_failed", texts.not_recorded(call.name, call.id))
        ledger = request.run.sampled
        if ledger is not None:  # the sampling requests the call's server made, in the run's record and totals again
            for sampled in self.sampled.get(call.id, []):
                ledger.record(sampled)
                ledger.charge(sampled)
        return recorded


class _ReplayAgent(Agent):
    """The same loop; only the calls the recorded run still waits on pause (the others' decisions are recorded)."""

    waiting: dict[str, str]
    """Call id -> why it waited, for the calls the recorded run waits on."""

    changes: dict[int, list[ToolSpec]]
    """Step position -> the tools the recorded step was offered when they had changed before it."""
    source: ReplaySource

    def _why_risky(self, call: ToolCall) -> str | None:
        return self.waiting.get(call.id)

    async def _refresh_tools(self, state: RunState) -> bool:
        offered = self.changes.get(len(state.steps))
        if offered is not None:
            self.source.offer(_safe(offered))
        return await super()._refresh_tools(state)


@dataclass
class ReplayOutcome:
    identical: bool
    difference: str | None
    replayed: RunState
    sent: list[ToolCall]

    def describe(self) -> str:
        if self.identical:
            return (
                f"identical: {counted(len(self.replayed.steps), 'step')}, {counted(len(self.sent), 'tool call')}, "
                f"same exit ({exit_text(self.replayed)})"
            )
        return f"differs: {self.difference}"


async def replay(recorded: RunState, *, limits: RunLimits | None = None) -> ReplayOutcome:
    """Run the loop again on the record; `limits` replaces the recorded ones (to see what a change would do). A
    code-mode script's run runs its script again, its calls answered from the record (tools/code_mode/replay.py)."""
    if recorded.script is not None:
        from toolwire_client.tools.code_mode.replay import replay_script

        script, sent = await replay_script(recorded)
        difference = first_difference(recorded, script)
        return ReplayOutcome(difference is None, difference, script, sent)
    config = config_of(recorded) if recorded.config else RunConfig(model=recorded.model)
    results = {r.call_id: r for step in recorded.steps for r in step.results}
    source = ReplaySource(_specs(config, recorded), results)
    source.stubs = [spec for spec in source._specs if spec.description == RECORDED]
    source.sampled = _sampled_by_call(recorded)
    replaying = config.model_copy(update={"name": recorded.agent_name, "limits": limits or config.limits})
    agent = _ReplayAgent(ReplayModel(recorded), ToolBox([source]), config=replaying)
    agent.source = source
    agent.changes = {n: step.tools for n, step in enumerate(recorded.steps) if step.tools is not None}
    agent.waiting = {p.call.id: p.approval_reason or "waiting in the recorded run" for p in recorded.pending if p.waits}
    fresh = RunState(
        run_id=recorded.run_id,
        agent_name=recorded.agent_name,
        task=recorded.task,
        model=recorded.model,
        messages=_opening(recorded),
        config=recorded.config,
    )
    replayed = await agent.resume(fresh)
    difference = first_difference(recorded, replayed)
    return ReplayOutcome(difference is None, difference, replayed, source.sent)


def _sampled_by_call(recorded: RunState) -> dict[str, list[SamplingRecord]]:
    """The run's sampling requests by the call they came during (one whose call is unknown: the first call of its
    step), so the replayed run's usage and budgets count them where the recorded run did."""
    found: dict[str, list[SamplingRecord]] = {}
    for sampled in recorded.sampling:
        calls = recorded.steps[sampled.step - 1].tool_calls if 0 < sampled.step <= len(recorded.steps) else []
        call_id = sampled.call_id or (calls[0].id if calls else None)
        if call_id is not None:
            found.setdefault(call_id, []).append(sampled.model_copy())
    return found


def _opening(recorded: RunState) -> list[Message]:
    """The messages before the first model call: the system prompt and the task."""
    for n, message in enumerate(recorded.messages):
        if isinstance(message, UserMessage):
            return [replace(m) for m in recorded.messages[: n + 1]]
    return [UserMessage(content=recorded.task)]


RECORDED = "(recorded)"


def _specs(config: RunConfig, recorded: RunState) -> list[ToolSpec]:
    """The recorded tool definitions of the first step, made not risky (the loop asks _ReplayAgent instead), and
    each tool the record called without them (a record without definitions, a tool search's tool called before it
    was loaded), with an open schema."""
    specs = {s.name: s for s in _safe(config.tools)}
    for step in recorded.steps:
        for call in step.tool_calls:
            specs.setdefault(call.name, ToolSpec(name=call.name, description=RECORDED, policy=ToolPolicy()))
    return list(specs.values())


def _safe(specs: list[ToolSpec]) -> list[ToolSpec]:
    """Tool definitions made not risky (the replay's loop asks _ReplayAgent instead)."""
    safe = {"risky": False, "destructive_hint": False}
    return [s.model_copy(update={"policy": s.policy.model_copy(update=safe)}) for s in specs]


def exit_text(state: RunState) -> str:
    return f"{state.status}, {state.stop_reason or 'no exit recorded'}"


def _step_text(step: StepRecord) -> str:
    if not step.tool_calls:
        return f"final answer {step.model_text!r}"
    return ", ".join(c.signature for c in step.tool_calls)


def _observations(step: StepRecord) -> list[tuple[str, str, bool]]:
    return [(r.name, r.content, r.is_error) for r in step.results]


def first_difference(recorded: RunState, replayed: RunState) -> str | None:
    """The first place the replayed path leaves the recorded one, or None when they are the same."""
    for n in range(max(len(recorded.steps), len(replayed.steps))):
        label = f"step {n + 1}"
        if n >= len(replayed.steps):
            return (
                f"{label}: expected {_step_text(recorded.steps[n])}, but the replay ended before it "
                f"({exit_text(replayed)})"
            )
        if n >= len(recorded.steps):
            return f"{label}: expected the run to end ({exit_text(recorded)}), but the replay went on with " + (
                _step_text(replayed.steps[n])
            )
        want, got = recorded.steps[n], replayed.steps[n]
        if [(c.name, c.arguments) for c in want.tool_calls] != [(c.name, c.arguments) for c in got.tool_calls]:
            return f"{label}: expected calls {_step_text(want)}, got {_step_text(got)}"
        if want.view != got.view:
            return f"{label}: expected the model to be sent {want.view}, got {got.view} (the context budget's view)"
        for call, w, g in zip(want.tool_calls, _observations(want), _observations(got), strict=False):
            if w != g:
                return f"{label}: {call.signature} expected observation {w[1]!r}, got {g[1]!r}"
        if len(got.results) < len(want.results):
            missing = want.tool_calls[len(got.results)]
            return (
                f"{label}: expected {missing.signature} to be answered, but the replay "
                "stopped here "
                f"({exit_text(replayed)}: {replayed.report})"
            )
    ran_out = END_OF_RECORD in (replayed.report or "")
    if ran_out and recorded.stop_reason is not None:
        return (
            f"step {len(recorded.steps) + 1}: expected the run to end ({exit_text(recorded)}), but the replay "
            "asked the model for another step"
        )
    if _same_exit(recorded, replayed):
        return None
    return f"exit: expected {exit_text(recorded)}, got {exit_text(replayed)} ({replayed.report})"


def _same_exit(recorded: RunState, replayed: RunState) -> bool:
    if (recorded.status, recorded.stop_reason) == (replayed.status, replayed.stop_reason):
        return True
    # A run cut short by a crash has no exit: the replay ends where its record ends.
    return recorded.stop_reason is None and END_OF_RECORD in (replayed.report or "")
