"""A run's timeline as data: one bar per model call and per tool call, in seconds from the start of the run, with the
marks a reader needs (tokens, errors, retries, cuts, what a call waits for). Drawn by `toolwire trace show
--waterfall` (cli/waterfall.py, in the terminal) and by `toolwire ui` (ui/svg.py, as SVG)."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from toolwire_client.run.state import RunState, StepRecord
from toolwire_shared.results import ToolResult


@dataclass(frozen=True)
class Bar:
    label: str
    start_s: float
    duration_s: float
    kind: str
    """'model', 'tool', 'error' or 'waiting'."""
    mark: str = ""


def bars(state: RunState) -> list[Bar]:
    """The rows of the waterfall, in order, with times in seconds from the start of the run."""
    origin = origin_of(state)
    rows: list[Bar] = []
    failed_before: set[str] = set()
    for step in state.steps:
        model_start = (step.started_at - origin).total_seconds()
        rows.append(Bar(f"{step.index} model", model_start, step.model_latency_s, "model", _model_mark(step)))
        tools_start = step.started_at + timedelta(seconds=step.model_latency_s)
        answered = {r.call_id for r in step.results}
        failed_now: set[str] = set()
        for i, result in enumerate(step.results):
            branch = "└" if i == len(step.results) - 1 and answered >= {c.id for c in step.tool_calls} else "├"
            start = ((result.started_at or tools_start) - origin).total_seconds()
            kind = "error" if result.is_error else "tool"
            mark = _tool_mark(result, failed_before)
            rows.append(Bar(f"{step.index} {branch} {result.name}", start, result.duration_s, kind, mark))
            if result.is_error:
                failed_now.add(result.name)
        for call in step.tool_calls:
            if call.id not in answered:
                waiting = (tools_start - origin).total_seconds()
                rows.append(Bar(f"{step.index} └ {call.name}", waiting, 0.0, "waiting", _pending_mark(state, call.id)))
        failed_before = failed_now
    return rows


def origin_of(state: RunState) -> datetime:
    starts = [state.started_at, *(s.started_at for s in state.steps)]
    starts += [r.started_at for s in state.steps for r in s.results if r.started_at is not None]
    return min(starts)


def _model_mark(step: StepRecord) -> str:
    attempts = step.model_reply.attempts if step.model_reply else 1
    waited = step.model_reply.waited_s if step.model_reply else 0.0
    tokens = f"{step.usage.input_tokens}→{step.usage.output_tokens} tok"
    if attempts > 1:
        tokens += f"  ↻ {attempts} attempts"
    if waited >= 0.1:
        tokens += f"  ⏸ waited {waited:.1f} s"
    return tokens


def _tool_mark(result: ToolResult, failed_before: set[str]) -> str:
    marks: list[str] = []
    if result.is_error:
        marks.append(f"✗ {result.error_kind or 'error'}")
    if result.attempts > 1:
        marks.append(f"↻ {result.attempts} attempts")
    if result.name in failed_before:
        marks.append("↻ retry after error")
    if result.truncated:
        marks.append("✂ truncated")
    return "  ".join(marks)


def _pending_mark(state: RunState, call_id: str) -> str:
    for pending in state.pending:
        if pending.call.id == call_id:
            return f"⏸ {pending.state.replace('_', ' ')}"
    return "⏸ no result"


def run_end_s(state: RunState, rows: list[Bar]) -> float:
    origin = origin_of(state)
    ends = [b.start_s + b.duration_s for b in rows]
    ends += [(s.finished_at - origin).total_seconds() for s in state.steps if s.finished_at is not None]
    return max([*ends, 0.0])
