"""A run's timeline in the terminal: model calls and tool calls as bars on one time axis.

Pure: RunState in, rich renderable (or plain text) out, so `toolwire trace show --waterfall` and tests share it.
Parallel calls of one step sit on adjacent rows over the same stretch of the axis; errors and retries are marked.
"""

import io
from dataclasses import dataclass
from datetime import datetime, timedelta

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from toolwire_client.run.state import RunState, StepRecord
from toolwire_shared.results import ToolResult

MODEL_BAR = "█"
TOOL_BAR = "▆"
ERROR_BAR = "▒"
"""Errors get their own glyph so they show without colour too."""


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
    origin = _origin(state)
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


def _origin(state: RunState) -> datetime:
    starts = [state.started_at, *(s.started_at for s in state.steps)]
    starts += [r.started_at for s in state.steps for r in s.results if r.started_at is not None]
    return min(starts)


def _model_mark(step: StepRecord) -> str:
    attempts = step.model_reply.attempts if step.model_reply else 1
    tokens = f"{step.usage.input_tokens}→{step.usage.output_tokens} tok"
    if attempts > 1:
        return f"{tokens}  ↻ {attempts} attempts"
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


def _run_end_s(state: RunState, rows: list[Bar]) -> float:
    origin = _origin(state)
    ends = [b.start_s + b.duration_s for b in rows]
    ends += [(s.finished_at - origin).total_seconds() for s in state.steps if s.finished_at is not None]
    return max([*ends, 0.0])


def _bar_text(bar: Bar, total_s: float, width: int) -> Text:
    scale = width / total_s if total_s > 0 else 0.0
    first = min(width - 1, int(bar.start_s * scale))
    cells = max(1, round((bar.start_s + bar.duration_s) * scale) - first)
    cells = min(cells, width - first)
    text = Text(" " * first)
    if bar.kind == "waiting":
        text.append("┆", style="yellow")
        return text
    glyph, style = {"model": (MODEL_BAR, "blue"), "tool": (TOOL_BAR, "green"), "error": (ERROR_BAR, "red")}[bar.kind]
    text.append(glyph * cells, style=style)
    return text


def _seconds(value: float) -> str:
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


class Waterfall:
    """Renders at the console's width: labels and marks keep their room, the time axis takes the rest."""

    def __init__(self, state: RunState, width: int | None = None):
        self.state, self.width = state, width

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        rows = bars(self.state)
        label_w = max([len("step / call"), *(len(b.label) for b in rows)])
        mark_w = max([0, *(len(b.mark) for b in rows)])
        width = self.width or max(20, options.max_width - label_w - mark_w - 14)
        yield _drawing(self.state, rows, width)


def waterfall(state: RunState, width: int | None = None) -> RenderableType:
    """The timeline as a rich renderable: one row per model call and per tool call (width: the axis, in cells)."""
    return Waterfall(state, width)


def _drawing(state: RunState, rows: list[Bar], width: int) -> RenderableType:
    total = _run_end_s(state, rows)
    axis = Text(f"0{_seconds(total).rjust(width - 1)}" if width > 8 else "")
    table = Table(box=None, show_header=True, pad_edge=False, padding=(0, 1))
    table.add_column("step / call", no_wrap=True)
    table.add_column(axis, no_wrap=True, min_width=width, max_width=width)
    table.add_column("time", justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    for bar in rows:
        duration = "" if bar.kind == "waiting" else _seconds(bar.duration_s)
        table.add_row(bar.label, _bar_text(bar, total, width), duration, bar.mark)
    legend = Text(
        f"{MODEL_BAR} model  {TOOL_BAR} tool  {ERROR_BAR} error  ↻ retry  ⏸ waiting  — run {state.run_id}: "
        f"{state.status}, {len(state.steps)} steps, {_seconds(total)}",
        style="dim",
    )
    return Group(table, legend)


def waterfall_text(state: RunState, width: int = 60) -> str:
    """The same timeline as plain text (no colour), for logs and tests."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width + 120, color_system=None, force_terminal=False)
    console.print(waterfall(state, width))
    return buffer.getvalue()
