"""One Agent's context keeping: before each request, the view of the run that is sent (run/context_view.py), moved on
when the request would pass the context budget: first the oldest results cleared to stubs, then, if still over, the
older turns summarised by the run's model in a compact step. After the reply, where the request's tokens went.

The decisions count tokens as the split does (tiktoken's cl100k_base over each message's JSON and the tool
definitions, models/token_split.py: the same in every process, so a replay decides as the run did) and are saved as
each step's ViewMark."""

import json
import operator
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from toolwire_client.config import RunConfig
from toolwire_client.context.compaction import compact_request
from toolwire_client.context.native import native_form
from toolwire_client.models.token_split import SplitCounter, TokenSplit, count
from toolwire_client.models.tokens import MEDIA_PART_TOKENS
from toolwire_client.run.context_view import (
    DEFAULT_INLINE_RESULT_CHARS,
    PROVIDER_CLEARS,
    NativeForm,
    ViewCache,
    ViewMark,
    last_mark,
    opening_end,
    sent_view,
    summary_message,
    turn_starts,
)
from toolwire_client.run.ordering import check_order
from toolwire_client.run.state import RunState, StepRecord
from toolwire_client.tools.kept_results import KeptResults
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import Message, ToolResultMessage
from toolwire_shared.records import record_text
from toolwire_shared.tools import ToolSpec, spec_json

STUB_TARGET = 0.5
"""Clearing stops once the request is at most this share of the budget: the next requests grow back to the budget
sharing one prefix (a provider's prompt cache reads it) before the view moves again."""
RECENT_SHARE = 0.25
"""A summary keeps the latest turns that fit in this share of the budget as they are (the latest turn always)."""

Compact = Callable[[list[Message], NativeForm | None], Awaitable[StepRecord]]
"""Sends a summary request to the run's model as a compact step (the loop's: limits, span, usage, the step's end),
to the provider's own compaction when a native form is named (context/native.py)."""


def kept_results(toolbox: ToolBox, config: RunConfig) -> KeptResults | None:
    """The run's read_result layer: the ToolBox's own, or one added when the config keeps results out or sets a
    budget (None for a sub-agent's view of its parent's tools: its results stay inline)."""
    for layer in toolbox.layers:
        if isinstance(layer, KeptResults):
            return layer
    if config.inline_result_chars is None and config.context_budget is None:
        return None
    layer = KeptResults(config.inline_result_chars or DEFAULT_INLINE_RESULT_CHARS)
    return layer if toolbox.add_layer(layer) else None


@dataclass
class _Run:
    """What the keeper holds of one run while it drives it (a resumed run's is read again from its steps)."""

    mark: ViewMark | None
    summary: Message | None
    views: ViewCache = field(default_factory=ViewCache)
    split: SplitCounter = field(default_factory=SplitCounter)
    sizes: dict[int, tuple[Message, int]] = field(default_factory=dict)
    specs: tuple[list[ToolSpec], int] | None = None


class ContextKeeper:
    """An Agent's: for each run it drives, the view each request is sent and where its tokens went; without a
    read_result layer (a sub-agent's view of its parent's tools) every request is the whole list."""

    def __init__(self, config: RunConfig, kept: KeptResults | None):
        self.kept = kept
        self.inline = config.inline_result_chars if kept is not None else None
        self.budget = config.context_budget if kept is not None else None
        self.native = native_form(config) if self.budget is not None else None
        """The provider's own form that keeps the budget (context/native.py), or None for toolwire's own."""
        self._runs: dict[str, _Run] = {}

    def forget(self, run_id: str) -> None:
        self._runs.pop(run_id, None)

    def _run(self, state: RunState) -> _Run:
        run = self._runs.get(state.run_id)
        if run is None:
            run = self._runs[state.run_id] = _Run(*last_mark(state.steps))
        return run

    def view(self, state: RunState) -> tuple[list[Message], ViewMark | None]:
        """The next request's messages as the run's last mark leaves them; read_result offered once one is cut."""
        run = self._run(state)
        if run.mark is None and not run.views.long_results(state.messages, self.inline):
            return state.messages, None  # nothing cut and no result long: the list itself (sent_view's first case)
        sent = sent_view(state.messages, run.mark, run.summary, self.inline, run.views)
        if sent is not state.messages and self.kept is not None:
            self.kept.needed()
        return sent, run.mark

    async def request(
        self, state: RunState, specs: Sequence[ToolSpec], compact: Compact
    ) -> tuple[list[Message], ViewMark | None]:
        """The next request's messages and the mark they were made under (saved on the step); a view that clears
        or summarises is checked as a request (run/ordering.py) before it is sent."""
        if self.budget is None:
            return self.unbudgeted(state)
        sent, mark = await self._request(state, specs, compact)
        if mark is not None:
            check_order(sent)
        return sent, mark

    def unbudgeted(self, state: RunState) -> tuple[list[Message], ViewMark | None]:
        """`request` without a context budget: nothing to decide, the view as the run's last mark leaves it (the
        loop calls it as it is, no coroutine, no tool list and no compact step made for nothing)."""
        sent, mark = self.view(state)
        if mark is not None:
            check_order(sent)
        return sent, mark

    async def _request(
        self, state: RunState, specs: Sequence[ToolSpec], compact: Compact
    ) -> tuple[list[Message], ViewMark | None]:
        sent, mark = self.view(state)
        budget = self.budget
        if budget is None or self._size(state.run_id, self._sized(state, sent, mark), specs) <= budget:
            return sent, mark
        mark = self._cleared(state, mark or ViewMark(native=self.native), specs, budget)
        sent, mark = self.view_at(state, mark)
        sized = self._sized(state, sent, mark)
        if self._size(state.run_id, sized, specs) <= budget:
            return sent, mark
        keep_from = self._recent(state, sized, mark, specs, budget)
        if keep_from is None:
            return sent, mark  # nothing older left to summarise: sent over the budget
        if self.native is None:
            step = await compact(compact_request(self._turns(state, sent, mark, keep_from)), None)
        else:  # the provider summarises the turns as the model read them (cleared results as stubs), not all kept
            step = await compact(sized[: keep_from - (len(state.messages) - len(sized))], self.native)
        step.view = ViewMark(
            stubbed_upto=max(mark.stubbed_upto, keep_from),
            summary_upto=keep_from,
            summary_step=step.index,
            native=self.native,
        )
        return self.view_at(state, step.view)

    def view_at(self, state: RunState, mark: ViewMark) -> tuple[list[Message], ViewMark]:
        """The view under `mark`, which is the run's mark from now on."""
        run = self._run(state)
        run.mark = mark
        run.summary = summary_message(mark, state.steps[mark.summary_step - 1]) if mark.summary_step else None
        if self.kept is not None:
            self.kept.needed()
        return sent_view(state.messages, mark, run.summary, self.inline, run.views), mark

    def _sized(self, state: RunState, sent: list[Message], mark: ViewMark | None) -> list[Message]:
        """The request the decisions count: `sent`, or, where the provider clears results itself, `sent` with the
        results from the mark's summary to its `stubbed_upto` counted as stubs (about what the provider clears)."""
        if mark is None or mark.native not in PROVIDER_CLEARS:
            return sent
        estimate = mark.model_copy(update={"native": None})
        view = sent_view(state.messages, estimate, None, self.inline, self._run(state).views)
        shift = len(state.messages) - len(sent)
        return [*sent[: mark.summary_upto - shift], *view[mark.summary_upto :]]

    def split_for(self, state: RunState) -> Callable[[list[Message], Sequence[ToolSpec], int], TokenSplit]:
        """Where a request of this run's tokens went (its counter remembers what the last request held)."""
        return self._run(state).split.split

    # ---- the decisions --------------------------------------------------------------------------------------
    def _cleared(self, state: RunState, mark: ViewMark, specs: Sequence[ToolSpec], budget: int) -> ViewMark:
        """The mark with results cleared from the oldest on (never the latest turn's) until the request is within
        STUB_TARGET of the budget, or no result is left to clear."""
        messages = state.messages
        sent, _ = self.view_at(state, mark)
        total = self._size(state.run_id, self._sized(state, sent, mark), specs)
        turns = turn_starts(messages, opening_end(messages))
        last_turn = turns[-1] if turns else len(messages)
        views = self._run(state).views
        upto = max(mark.stubbed_upto, mark.summary_upto, opening_end(messages))
        n = upto
        for n in range(upto, last_turn):
            message = messages[n]
            if not isinstance(message, ToolResultMessage):
                continue
            shown = views.heads.get(n, message)
            total -= self._tokens(state.run_id, shown) - self._tokens(state.run_id, views.stub(messages, n))
            if total <= budget * STUB_TARGET:
                n += 1
                break
        else:
            n = max(upto, last_turn)
        return mark.model_copy(update={"stubbed_upto": max(n, mark.stubbed_upto)})

    def _recent(
        self, state: RunState, sent: list[Message], mark: ViewMark, specs: Sequence[ToolSpec], budget: int
    ) -> int | None:
        """Where the turns a summary keeps begin: the earliest turn from which the rest fits RECENT_SHARE of the
        budget (the latest turn at least); None when that leaves nothing older to summarise."""
        messages = state.messages
        start = max(opening_end(messages), mark.summary_upto)
        turns = turn_starts(messages, start)
        if not turns:
            return None
        shift = len(messages) - len(sent)  # the summary stands for that many messages more than one
        room = budget * RECENT_SHARE
        keep_from = turns[-1]
        for turn in reversed(turns):
            if sum(self._tokens(state.run_id, m) for m in sent[turn - shift :]) > room:
                break
            keep_from = turn
        return keep_from if keep_from > start else None

    def _turns(self, state: RunState, sent: list[Message], mark: ViewMark, keep_from: int) -> list[Message]:
        """The turns a summary is written from, as the model saw them: an older summary first, if any."""
        start = opening_end(state.messages)
        shift = len(state.messages) - len(sent)
        return sent[start : keep_from - shift]

    # ---- sizes ----------------------------------------------------------------------------------------------
    def _tokens(self, run_id: str, message: Message) -> int:
        sizes = self._runs[run_id].sizes
        known = sizes.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        media = len(message.media) if isinstance(message, ToolResultMessage) else 0
        tokens = count(record_text(message, exclude={"media"})) + media * MEDIA_PART_TOKENS
        sizes[id(message)] = (message, tokens)
        return tokens

    def _size(self, run_id: str, sent: list[Message], specs: Sequence[ToolSpec]) -> int:
        run = self._runs[run_id]
        if run.specs is None or len(specs) != len(run.specs[0]) or not all(map(operator.is_, specs, run.specs[0])):
            run.specs = (list(specs), count(json.dumps([spec_json(spec) for spec in specs])))
        return sum(self._tokens(run_id, m) for m in sent) + run.specs[1]
