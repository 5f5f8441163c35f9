"""Where each request's input tokens went, from a saved run alone (`trace show`, its `--json`, the console): every
request is made again from the run's list, its step's ViewMark and the tools offered then (run/context_view.py: the
view is a pure function of those), counted by part and scaled to the input tokens the provider reported. Nothing is
counted on the loop's path (a run with tracing on puts the same split on its chat spans)."""

from pydantic import ValidationError

from toolwire_client.config import RunConfig
from toolwire_client.models.token_split import SplitCounter, TokenSplit
from toolwire_client.run.context_view import ViewCache, sent_view, summary_message
from toolwire_client.run.state import RunState
from toolwire_shared.messages import AssistantMessage
from toolwire_shared.tools import ToolSpec


def _config(state: RunState) -> RunConfig:
    try:
        return RunConfig.model_validate(state.config) if state.config else RunConfig(model=state.model)
    except ValidationError:
        return RunConfig(model=state.model)


def request_splits(state: RunState) -> dict[int, TokenSplit]:
    """Step index -> where its request's input tokens went. A compact step's request is the turns it summarised,
    all history; a step whose reply is not in the list (a record cut short) is left out."""
    config = _config(state)
    replies = [n for n, message in enumerate(state.messages) if isinstance(message, AssistantMessage)]
    specs: list[ToolSpec] = list(config.tools)
    counter, cache = SplitCounter(), ViewCache()
    splits: dict[int, TokenSplit] = {}
    asked = 0
    for step in state.steps:
        if step.tools is not None:
            specs = step.tools
        if step.kind == "compact":
            splits[step.index] = TokenSplit(history=step.usage.input_tokens, scaled=True)
            continue
        if asked >= len(replies):
            break
        upto, asked = replies[asked], asked + 1
        mark = step.view
        summary = summary_message(mark, state.steps[mark.summary_step - 1]) if mark and mark.summary_step else None
        whole = sent_view(state.messages, mark, summary, config.inline_result_chars, cache)
        sent = whole[: upto - (len(state.messages) - len(whole))]
        splits[step.index] = counter.split(sent, specs, step.usage.input_tokens)
    return splits


def split_line(split: TokenSplit) -> str:
    """`system 120 | tools 2,300 | history 410 | results 6,020` (estimates are marked `~`)."""
    mark = "" if split.scaled else "~"
    return " | ".join(f"{part} {mark}{tokens:,}" for part, tokens in split.parts().items())
