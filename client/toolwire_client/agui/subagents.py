"""A thread's run with the child runs its tool calls started (delegate's sub-agents, code mode's scripts), read from
the store as the parts of one stream (mapping.py). Each child is an AG-UI subagent invocation, its run id the
`subagentRunId`: its start (SUBAGENT_STARTED, naming the call and message that started it), its records (attributed
by `subagentRunId`), its end (SUBAGENT_FINISHED, SUBAGENT_ERROR for a failed run), all after the call that started
it and before that call's result. A child is its own run in the store, found by its parent link: no second notion of
a run. A nested RUN_STARTED (parentRunId) is not used: @ag-ui/client rejects a RUN_STARTED inside a run. As in the
console, a person sees only the child runs of agents they may see (a sub-agent's agent is `NAME.sub`)."""

from collections.abc import Callable
from dataclasses import dataclass, field

from ag_ui.core import (
    BaseEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentFinishedSuccessOutcome,
    SubagentFinishedSuspendedOutcome,
    SubagentStartedEvent,
)

from toolwire_client.agui.mapping import Part, Sub, call_id_of, message_id, step_parts
from toolwire_client.run.state import RunState
from toolwire_client.store import SqlRunStore


@dataclass
class Tree:
    """One read of a thread: its parts in stream order, and the child runs read with their place in the stream."""

    parts: list[Part] = field(default_factory=list)
    runs: dict[str, RunState] = field(default_factory=dict)
    subs: dict[str, Sub] = field(default_factory=dict)


class Reader:
    """Reads a thread's tree from the store, one load per child run; a child that is done is read once (it never
    changes again)."""

    def __init__(self, store: SqlRunStore, sees: Callable[[str], bool]) -> None:
        self.store, self.sees = store, sees
        self._done: dict[str, tuple[RunState, dict[str, str]]] = {}

    async def read(self, state: RunState) -> Tree:
        tree = Tree()
        await self._walk(state, None, await self._children(state), tree)
        return tree

    async def _walk(self, state: RunState, sub: Sub | None, children: dict[str, str], tree: Tree) -> None:
        for step in state.steps:
            said, answered = step_parts(state, step, sub)
            tree.parts += said
            for call in step.tool_calls:
                if (child_id := children.get(call.id)) is None:
                    continue
                child, below = await self._read(child_id)
                if not self.sees(child.agent_name):
                    continue  # not streamed, nor anything below it
                made = Sub(
                    run_id=child.run_id,
                    name=child.agent_name,
                    task=child.task,
                    tool_call_id=call_id_of(sub, call.id),
                    message_id=message_id(state.run_id, step),
                    parent=sub,
                )
                tree.runs[child.run_id], tree.subs[child.run_id] = child, made
                tree.parts.append(Part(f"start:{child.run_id}", None, (), made))
                await self._walk(child, made, below, tree)
                if (end := ended(child)) is not None:
                    tree.parts.append(Part(f"end:{child.run_id}", None, (end,), made, ends=True))
            tree.parts += answered

    async def _read(self, run_id: str) -> tuple[RunState, dict[str, str]]:
        if (known := self._done.get(run_id)) is not None:
            return known
        child = await self.store.load(run_id)
        read = child, await self._children(child)
        if child.status == "done":
            self._done[run_id] = read
        return read

    async def _children(self, state: RunState) -> dict[str, str]:
        """The child runs of `state`'s calls, by call id (none asked for a run that made no call)."""
        if not any(step.tool_calls for step in state.steps):
            return {}
        found = await self.store.children(state.run_id)
        found.update({p.call.id: p.child_run_id for p in state.pending if p.child_run_id is not None})
        return found


def started(sub: Sub) -> SubagentStartedEvent:
    return SubagentStartedEvent(
        subagent_run_id=sub.run_id,
        name=sub.name,
        description=sub.task,
        parent_subagent_run_id=sub.parent.run_id if sub.parent is not None else None,
        parent_tool_call_id=sub.tool_call_id,
        parent_message_id=sub.message_id,
    )


def ended(child: RunState) -> BaseEvent | None:
    """A child run's end as its subagent's: finished (done, stopped: its result as RUN_FINISHED's), or an error
    (failed); None while it runs or waits."""
    if child.status in ("done", "stopped"):
        result = {"status": child.status, "answer": child.final_answer, "stopReason": child.stop_reason}
        return SubagentFinishedEvent(
            subagent_run_id=child.run_id, result=result, outcome=SubagentFinishedSuccessOutcome()
        )
    if child.status == "failed":
        said = child.report or child.stop_reason or "the sub-agent's run failed"  # for people; the code for code
        return SubagentErrorEvent(subagent_run_id=child.run_id, message=said, code=child.stop_reason or "failed")
    return None


def opening(sub: Sub, open_subs: dict[str, Sub], seen: set[str]) -> list[BaseEvent]:
    """SUBAGENT_STARTED for `sub`, after that of each sub-agent above it not started in this AG-UI run yet (the
    client holds a parentSubagentRunId to one it has seen in the run)."""
    above = sub.parent
    out = opening(above, open_subs, seen) if above is not None and above.run_id not in seen else []
    seen.add(sub.run_id)
    open_subs[sub.run_id] = sub
    return [*out, started(sub)]


def closing(open_subs: dict[str, Sub], tree: Tree, interrupt_ids: dict[str, list[str]]) -> list[BaseEvent]:
    """What ends the sub-agents still open when the AG-UI run ends (the client refuses RUN_FINISHED before):
    one waiting for a person is suspended (with the interrupts it raised itself); one neither ended nor waiting (a
    parent that ended without it) is an error."""
    out: list[BaseEvent] = []
    for run_id in reversed(list(open_subs)):
        child = tree.runs[run_id]
        if child.status == "waiting_for_approval":
            outcome = SubagentFinishedSuspendedOutcome(interrupt_ids=interrupt_ids.get(run_id) or None)
            out.append(SubagentFinishedEvent(subagent_run_id=run_id, outcome=outcome))
        else:
            said = f"sub-agent run {run_id} is {child.status}: the run that started it ended first"
            out.append(SubagentErrorEvent(subagent_run_id=run_id, message=said, code="not_ended"))
    open_subs.clear()
    return out
