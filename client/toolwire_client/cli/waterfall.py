"""A run's timeline in the terminal: model calls and tool calls as bars on one time axis.

Pure: RunState in, rich renderable (or plain text) out, so `toolwire trace show --waterfall` and tests share it.
The bars themselves are computed in run/timeline.py (the run console draws the same ones as SVG).
Parallel calls of one step sit on adjacent rows over the same stretch of the axis; errors and retries are marked.
"""

import io

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from toolwire_client.run.state import RunState
from toolwire_client.run.timeline import Bar, bars, run_end_s
from toolwire_shared.terminal import inert, shown
from toolwire_shared.words import counted

__all__ = ["ERROR_BAR", "MODEL_BAR", "TOOL_BAR", "Bar", "bars", "waterfall", "waterfall_text"]

MODEL_BAR = "█"
TOOL_BAR = "▆"
ERROR_BAR = "▒"
"""Errors get their own glyph so they show without colour too."""


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
        label_w = max([len("step / call"), *(len(shown(b.label)) for b in rows)])
        mark_w = max([0, *(len(shown(b.mark)) for b in rows)])
        width = self.width or max(20, options.max_width - label_w - mark_w - 14)
        yield _drawing(self.state, rows, width)


def waterfall(state: RunState, width: int | None = None) -> RenderableType:
    """The timeline as a rich renderable: one row per model call and per tool call (width: the axis, in cells)."""
    return Waterfall(state, width)


def _drawing(state: RunState, rows: list[Bar], width: int) -> RenderableType:
    total = run_end_s(state, rows)
    axis = Text(f"0{_seconds(total).rjust(width - 1)}" if width > 8 else "")
    table = Table(box=None, show_header=True, pad_edge=False, padding=(0, 1))
    table.add_column("step / call", no_wrap=True)
    table.add_column(axis, no_wrap=True, min_width=width, max_width=width)
    table.add_column("time", justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    for bar in rows:
        duration = "" if bar.kind == "waiting" else _seconds(bar.duration_s)
        table.add_row(inert(bar.label), _bar_text(bar, total, width), duration, inert(bar.mark))
    legend = Text(
        f"{MODEL_BAR} model  {TOOL_BAR} tool  {ERROR_BAR} error  ↻ retry  ⏸ waiting  — run {shown(state.run_id)}: "
        f"{state.status}, {counted(len(state.steps), 'step')}, {_seconds(total)}",
        style="dim",
    )
    return Group(table, legend)


def waterfall_text(state: RunState, width: int = 60) -> str:
    """The same timeline as plain text (no colour), for logs and tests."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width + 120, color_system=None, force_terminal=False)
    console.print(waterfall(state, width))
    return buffer.getvalue()
