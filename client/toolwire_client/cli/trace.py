"""`toolwire trace show RUN` prints the step table (step | call | observation | tokens so far), how the run ended
and where each request's input tokens went; `toolwire trace export RUN` writes the whole saved run as JSON. Who
approved or rejected a call is read from the store's approval events (the record), not from the run state, and
shown beside the call."""

import json
from typing import Any, TextIO

import click

from toolwire_client import texts
from toolwire_client.cli._store import db_option, with_store
from toolwire_client.context.where import request_splits, split_line
from toolwire_client.models.token_split import PARTS, TokenSplit
from toolwire_client.run.state import RunState, StepRecord
from toolwire_client.store import SqlRunStore
from toolwire_client.store.base import DecisionRecord
from toolwire_client.store.events import LateOutcome, late_recorded
from toolwire_client.store.tree import load_tree
from toolwire_client.strategies.plan import PlanError, parse_plan, step_failure
from toolwire_shared.records import record_json
from toolwire_shared.results import ToolResult
from toolwire_shared.terminal import inert_json, shown

Decided = dict[tuple[str, str], DecisionRecord]
"""The recorded decisions of a run (and its sub-agents), by (run id, call id)."""

OBSERVATION_WIDTH = 200


def _cut(text: str, wide: bool) -> str:
    flat = " ".join(text.split())
    return flat if wide or len(flat) <= OBSERVATION_WIDTH else flat[: OBSERVATION_WIDTH - 3] + "..."


def decided_by(record: DecisionRecord) -> str:
    """'approved by alice', 'rejected by bob'; 'by (not recorded)' for a decision from before approvers were kept."""
    verb = "approved" if record.decision == "approve" else "rejected"
    return f"{verb} by {record.decided_by or '(not recorded)'}"


def step_lines(state: RunState, step: StepRecord, wide: bool = False, decided: Decided | None = None) -> list[str]:
    """One line per tool call of the step (or one for its final answer): step | call | observation | tokens so far;
    a call a person decided on says who: `refund({...}) [approved by alice]`; a call run as an MCP task names it and
    its status: `... [task 3fJx9a2b completed]`."""
    tokens = f"tokens so far {step.usage_so_far.total_tokens}"
    if step.kind == "review":
        return [f"step {step.index} | review: {_cut(step.model_text, wide)} | {tokens}"]
    if step.kind == "plan":
        return _plan_lines(step, tokens, wide)
    if step.kind == "compact":
        return [f"step {step.index} | compact: {_cut(step.model_text, wide)} | {tokens}"]
    if not step.tool_calls:
        return [f"step {step.index} | {_answer_label(state, step)}: {_cut(step.model_text, wide)} | {tokens}"]
    waiting = {p.call.id: p.approval_reason for p in state.pending if p.waits_for_approval}
    asked = {p.call.id: p.input.message for p in state.pending if p.waits_for_input and p.input}
    tasks = {p.call.id: f" [task {p.task_id[:8]} input_required]" for p in state.pending if p.task_id}
    results = {r.call_id: r for r in step.results}
    lines = []
    for call in step.tool_calls:
        result = results.get(call.id)
        if result is not None:
            observation = _media_labels(result) + _cut(result.content, wide)
            if result.task is not None:  # an MCP task's call: which task, and how it ended
                observation += f" [task {result.task.task_id[:8]} {result.task.status}]"
        elif call.id in waiting:
            why = waiting[call.id]
            observation = "not run: waiting for approval" + (f" ({why})" if why else "")
        elif call.id in asked:
            observation = f"waiting for input: {_cut(asked[call.id], wide)}{tasks.get(call.id, '')}"
        else:
            observation = "not run"
        record = (decided or {}).get((state.run_id, call.id))
        who = f" [{decided_by(record)}]" if record is not None else ""
        lines.append(f"step {step.index} | {call.signature}{who} | {observation} | {tokens}")
    return lines


def _media_labels(result: ToolResult) -> str:
    """`[image/png 4.0 kB] `: the images and audio the call returned, before its text (which a cut may shorten)."""
    return "".join(f"[{part.label}] " for part in result.media)


def _plan_lines(step: StepRecord, tokens: str, wide: bool) -> list[str]:
    """A plan, one row per planned step (or one row with the reply that did not parse)."""
    try:
        steps = parse_plan(step.model_text)
    except PlanError:
        return [f"step {step.index} | plan (did not parse): {_cut(step.model_text, wide)} | {tokens}"]
    return [f"step {step.index} | plan: {n}. {_cut(text, wide)} | {tokens}" for n, text in enumerate(steps, 1)]


def _answer_label(state: RunState, step: StepRecord) -> str:
    """'final', 'draft' (a review follows), or for a plan step's answer 'step i of n done' / 'step i of n failed'."""
    following = state.steps[step.index] if step.index < len(state.steps) else None
    if following is not None and following.kind == "review":
        return "draft"
    if step.plan_step is None:
        return "final"
    i, n = step.plan_step
    plan = state.plan
    named = plan is not None and plan.workflow and len(plan.steps) == n and plan.steps[i - 1].name
    where = f"step {i} of {n}" + (f" ({named})" if named else "")
    if step_failure(step.model_text) is not None:
        return f"{where} failed"
    return "final" if i == n else f"{where} done"


def trace_lines(
    state: RunState, wide: bool = False, children: dict[str, RunState] | None = None, decided: Decided | None = None
) -> list[str]:
    """The step table of the whole run, then how the run ended; a sub-agent's table (from `children`, by run id) is
    indented under the delegate call that started it."""
    children = children or {}
    lines = []
    loaded: list[str] | None = None
    for step in state.steps:
        lines += _step_tree(state, step, wide, children, decided)
        if step.loaded is not None and step.loaded != loaded:  # a tool search's loads as the step ended, when new
            loaded = step.loaded
            lines.append(f"step {step.index} | tools loaded: {', '.join(loaded) or 'none'}")
        lines += [f"step {step.index} | {texts.provider_cleared(edit)}" for edit in _applied_edits(step)]
    lines.append(
        f"-> {state.status}, {state.stop_reason or 'no exit recorded (still running or cut off)'}"
        f"{': ' + state.report if state.report else ''}"
    )
    return lines


def _step_tree(
    state: RunState, step: StepRecord, wide: bool, children: dict[str, RunState], decided: Decided | None
) -> list[str]:
    """A step's lines, each sub-agent's or script's table indented under the call that started it."""
    rows = step_lines(state, step, wide, decided)
    if len(rows) != len(step.tool_calls):  # a final answer's line, or a plan's rows: no call to nest under
        return rows
    lines = []
    for call, line in zip(step.tool_calls, rows, strict=True):
        lines.append(line)
        lines += sampling_lines(state, call.id, step.index, wide)
        sub = state.children.get(call.id)
        if sub is not None and sub.run_id in children:
            child = children[sub.run_id]
            kind = "script" if child.script is not None else "sub-agent"  # a run_code call's script
            lines.append(f"  {kind} {child.run_id}: {child.task}")
            lines += ["  " + nested for nested in trace_lines(child, wide, children, decided)]
    return lines


def sampling_lines(state: RunState, call_id: str, step: int, wide: bool = False) -> list[str]:
    """Under a call: its server's requests for the run's model (MCP sampling), answered or refused; one whose call
    is unknown (a handshake-era server, several calls in flight) under the step's first call."""
    first = next((s.tool_calls[0].id for s in state.steps if s.index == step and s.tool_calls), None)
    lines = []
    for record in state.sampling:
        if record.call_id != call_id and not (record.call_id is None and record.step == step and call_id == first):
            continue
        if record.refused is not None:
            lines.append(f"  sampling by {record.server}: refused: {_cut(record.refused, wide)}")
        else:
            said = _cut(record.answer or "", wide)
            lines.append(f"  sampling by {record.server}: {record.usage.total_tokens} tokens -> {said}")
    return lines


def _summary(state: RunState, decided: Decided) -> dict[str, object]:
    """What the table shows, as data: each step's calls and observations (and who decided on them), the usage and
    the exit."""
    steps = []
    splits = request_splits(state)
    for step in state.steps:
        results = {r.call_id: r for r in step.results}
        calls = [
            {
                "id": call.id,
                "name": call.name,
                "arguments": call.arguments,
                "observation": results[call.id].content if call.id in results else None,
                "is_error": results[call.id].is_error if call.id in results else None,
                "media": [part.label for part in results[call.id].media] if call.id in results else [],
                "decision": _decision(decided.get((state.run_id, call.id))),
            }
            for call in step.tool_calls
        ]
        final = None if step.tool_calls else step.model_text
        steps.append(
            {
                "index": step.index,
                "kind": step.kind,
                "plan_step": list(step.plan_step) if step.plan_step else None,
                "calls": calls,
                "final": final,
                "tokens_so_far": step.usage_so_far.total_tokens,
                "input_tokens": _split_json(splits.get(step.index)),
                "view": step.view.model_dump(mode="json") if step.view is not None else None,
                "loaded": step.loaded,
                "applied_edits": _applied_edits(step),
            }
        )
    return {
        "run_id": state.run_id,
        "task": state.task,
        "status": state.status,
        "stop_reason": state.stop_reason,
        "report": state.report,
        "final_answer": state.final_answer,
        "usage": record_json(state.usage),
        "cost_usd": state.cost_usd,
        "plan": state.plan.model_dump(mode="json") if state.plan is not None else None,
        "steps": steps,
        "sampling": [record.model_dump(mode="json", exclude={"asked"}) for record in state.sampling],
    }


def _applied_edits(step: StepRecord) -> list[dict[str, Any]]:
    """What the provider's own context editing cleared before the model read the step's request."""
    return step.model_reply.applied_edits if step.model_reply is not None else []


def _split_json(split: TokenSplit | None) -> dict[str, object] | None:
    return None if split is None else split.model_dump(mode="json")


def token_lines(state: RunState) -> list[str]:
    """Where each request's input tokens went (context/where.py): one line a step, then the run's sums."""
    splits = request_splits(state)
    if not splits:
        return []
    lines = ["input tokens by part (system | tool definitions | history | tool results):"]
    lines += [f"step {index} | {split_line(split)}" for index, split in splits.items()]
    total = TokenSplit(**{part: sum(getattr(s, part) for s in splits.values()) for part in PARTS})
    return [*lines, f"all steps | {split_line(total.model_copy(update={'scaled': True}))}"]


def _decision(record: DecisionRecord | None) -> dict[str, object] | None:
    return None if record is None else record.model_dump(mode="json", exclude={"run_id", "call_id", "tool"})


async def _decided(store: SqlRunStore, run_ids: list[str]) -> Decided:
    return {(d.run_id, d.call_id): d for run_id in run_ids for d in await store.decisions(run_id)}


def _load(db: str | None, run_id: str) -> tuple[RunState, Decided]:
    async def work(store: SqlRunStore) -> tuple[RunState, Decided]:
        return await store.load(run_id), await _decided(store, [run_id])

    return with_store(db, work)


def _load_tree(db: str | None, run_id: str) -> tuple[RunState, dict[str, RunState], Decided]:
    """The run and every sub-agent run below it, by run id, and their recorded decisions."""

    async def work(store: SqlRunStore) -> tuple[RunState, dict[str, RunState], Decided]:
        root, found = await load_tree(store, run_id)
        return root, found, await _decided(store, [run_id, *found])

    return with_store(db, work)


@click.group("trace")
def trace() -> None:
    """Show or export the saved trace of a run."""


@trace.command("show")
@click.argument("run_id")
@click.option("--wide", is_flag=True, help="Do not shorten long observations.")
@click.option("--waterfall", is_flag=True, help="Draw the timeline: model and tool calls as bars on a time axis.")
@click.option("--json", "as_json", is_flag=True, help="Print the steps and the exit as JSON instead of the table.")
@db_option
def show(run_id: str, wide: bool, waterfall: bool, as_json: bool, db: str | None) -> None:
    """The step table of RUN_ID: step | call | observation | tokens so far, then how the run ended."""
    if as_json:
        summary = _summary(*_load(db, run_id))
        summary["late_outcomes"] = [late_json(o) for o in with_store(db, lambda store: late_recorded(store, run_id))]
        click.echo(json.dumps(summary, indent=2))
        return
    if waterfall:
        from rich.console import Console

        from toolwire_client.cli.waterfall import waterfall as draw

        Console().print(draw(_load(db, run_id)[0]))
        return
    root, children, decided = _load_tree(db, run_id)
    for line in trace_lines(root, wide, children, decided):
        click.echo(shown(line))
    for outcome in with_store(db, lambda store: late_recorded(store, run_id)):
        click.echo(shown(late_line(outcome, wide)))
    for line in token_lines(root):
        click.echo(line)


def late_line(outcome: LateOutcome, wide: bool = False) -> str:
    """A call that completed on a worker after it had lost the run: what it returned, where; not in the run."""
    return (
        f"late outcome | {outcome.tool} ({outcome.call_id}) | {_cut(outcome.detail, wide)} | completed on "
        f"{outcome.recorded_by} after it lost the run; not in the model's history"
    )


def late_json(outcome: LateOutcome) -> dict[str, str]:
    return {
        "call_id": outcome.call_id,
        "tool": outcome.tool,
        "detail": outcome.detail,
        "recorded_by": outcome.recorded_by,
        "at": str(outcome.at),
    }


@trace.command("export")
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, default=True, help="JSON, the only format (the default).")
@click.option("-o", "--output", type=click.File("w"), default="-", help="File to write (default: stdout).")
@db_option
def export(run_id: str, as_json: bool, output: TextIO, db: str | None) -> None:
    """The whole saved run (messages, steps with model replies, results, tokens, latency) as JSON, with the
    recorded decisions on its calls (who approved or rejected each, why, when) under "approvals"."""
    state, decided = _load(db, run_id)
    exported = {
        **state.model_dump(mode="json"),
        "approvals": [d.model_dump(mode="json") for d in sorted(decided.values(), key=lambda d: d.at)],
    }
    output.write(inert_json(json.dumps(exported, indent=2, ensure_ascii=False)) + "\n")
