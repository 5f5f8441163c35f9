"""The run's waterfall as SVG: the bars of run/timeline.py (the ones `trace show --waterfall` draws in the terminal),
one row each, on one time axis. Plain SVG, no script: colours and a hover title per bar."""

from html import escape

from toolwire_client.run.state import RunState
from toolwire_client.run.timeline import bars, run_end_s

ROW_H = 22
LABEL_W = 200
AXIS_W = 560
MARK_W = 260
COLOURS = {"model": "#3b6fd8", "tool": "#2f9e55", "error": "#d0453b", "waiting": "#d9a400"}


def _seconds(value: float) -> str:
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def waterfall_svg(state: RunState) -> str:
    """One <svg>: a label, a bar and its marks per model call and tool call; a waiting call is a dashed tick."""
    rows = bars(state)
    total = run_end_s(state, rows)
    scale = AXIS_W / total if total > 0 else 0.0
    height = ROW_H * (len(rows) + 1) + 6
    width = LABEL_W + AXIS_W + MARK_W
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="waterfall" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="timeline of run {escape(state.run_id)}">',
        f'<text x="{LABEL_W}" y="14" class="axis">0</text>',
        f'<text x="{LABEL_W + AXIS_W}" y="14" class="axis" text-anchor="end">{_seconds(total)}</text>',
    ]
    for i, bar in enumerate(rows):
        y = ROW_H * (i + 1)
        x = LABEL_W + bar.start_s * scale
        title = f"{bar.label}: {'waiting' if bar.kind == 'waiting' else _seconds(bar.duration_s)} {bar.mark}".strip()
        parts.append(f'<g class="bar {bar.kind}"><title>{escape(title)}</title>')
        parts.append(f'<text x="4" y="{y + 15}">{escape(bar.label)}</text>')
        if bar.kind == "waiting":
            parts.append(
                f'<line x1="{x:.1f}" y1="{y + 3}" x2="{x:.1f}" y2="{y + 19}" stroke="{COLOURS["waiting"]}" '
                'stroke-width="3" stroke-dasharray="3 2"/>'
            )
        else:
            w = max(2.0, bar.duration_s * scale)
            colour = COLOURS[bar.kind]
            parts.append(f'<rect x="{x:.1f}" y="{y + 4}" width="{w:.1f}" height="{ROW_H - 8}" fill="{colour}" rx="2"/>')
        shown = "" if bar.kind == "waiting" else _seconds(bar.duration_s)
        parts.append(f'<text x="{LABEL_W + AXIS_W + 8}" y="{y + 15}">{escape(f"{shown}  {bar.mark}".strip())}</text>')
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)
