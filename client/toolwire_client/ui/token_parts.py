"""The run page's "Where the tokens go": each request's input tokens by part (system, tool definitions, history,
tool results; context/where.py), a bar per step, and the run's sums."""

from html import escape

from toolwire_client.context.where import request_splits
from toolwire_client.models.token_split import PARTS, TokenSplit
from toolwire_client.run.state import RunState

LABELS = {"system": "system", "tools": "tool definitions", "history": "history", "results": "tool results"}


def _bar(split: TokenSplit) -> str:
    total = split.total or 1
    parts = "".join(
        f'<span class="part part-{part}" style="width:{100 * tokens / total:.1f}%" title="{LABELS[part]}: '
        f'{tokens:,}"></span>'
        for part, tokens in split.parts().items()
        if tokens
    )
    return f'<div class="tokenbar">{parts}</div>'


def _row(label: str, split: TokenSplit) -> str:
    cells = "".join(f"<td>{tokens:,}</td>" for tokens in split.parts().values())
    return f"<tr><td>{escape(label)}</td>{cells}<td>{split.total:,}</td><td>{_bar(split)}</td></tr>"


def tokens_fragment(state: RunState) -> str:
    splits = request_splits(state)
    if not splits:
        return '<p id="tokens" class="dim">no request recorded</p>'
    sums = TokenSplit(**{part: sum(getattr(split, part) for split in splits.values()) for part in PARTS})
    head = "".join(f"<th>{LABELS[part]}</th>" for part in PARTS)
    kinds = {step.index: step.kind for step in state.steps}
    rows = "".join(
        _row(f"{index}" + (f" ({kinds[index]})" if kinds.get(index, "act") != "act" else ""), split)
        for index, split in splits.items()
    )
    return (
        f'<table id="tokens" class="grid"><thead><tr><th>step</th>{head}<th>input</th><th></th></tr></thead>'
        f"<tbody>{rows}</tbody><tfoot>{_row('all steps', sums)}</tfoot></table>"
    )
