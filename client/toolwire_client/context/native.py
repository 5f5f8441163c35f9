"""The context budget kept by the provider's own mechanism where the run's provider has one (`--context-native`).

- Anthropic Messages (context/anthropic_native.py): the provider writes the summary (compaction on demand) in a
  compact step; with `on`, it also clears old tool results itself (context editing, each request carries the edit).
  `auto` leaves the clearing to toolwire: measured (bench/context_native_bench.py, 200 steps of ~20 kB results,
  budget 20,000), the provider's clearing sends the whole history on every request (peak 117,757 tokens carried,
  12.7 M in all, against 17,914 and 2.5 M) and, clearing afresh each request, lets the model read ~1.5x as many
  tokens (~3.7 M against 2.5 M by an emulation of its documented rule), where toolwire's clearing drops to half the
  budget at once and lets the requests between two clearings share a cached prefix.
- OpenAI Responses (context/openai_compact.py): toolwire clears old results as ever; the summary is written by
  `POST /responses/compact`, in a compact step.

Either way the run's list stays whole (read_result reads any result from it) and each compact step's reply is the
provider's own compacted item, saved with the step and sent back in place of the turns it stands for: a resumed run
and a replay make the same requests from the record (run/context_view.py, `ViewMark.native`). The form is chosen
from the run's config alone (its model spec), so a replay, whose model is the record, chooses as the run did."""

import copy
from collections.abc import Awaitable, Callable

from toolwire_client.config import RunConfig
from toolwire_client.context import anthropic_native, openai_compact
from toolwire_client.models.anthropic import AnthropicModel
from toolwire_client.models.base import Model, ModelReply, WrappedModel
from toolwire_client.models.openai_responses import OpenAIResponsesModel
from toolwire_client.run.context_view import NativeForm
from toolwire_shared.messages import Message
from toolwire_shared.tools import ToolSpec

FORMS: dict[str, NativeForm] = {"anthropic": "anthropic", "openai-responses": "openai-responses"}
"""Model spec prefix -> the provider's form; the other providers have none."""

NATIVE_SUMMARY_TOKENS = 4_096
"""The most a provider's summary may take (Anthropic's max_tokens caps its thinking too: several thousand)."""

Compaction = Callable[[Model, list[Message], list[ToolSpec], int | None], Awaitable[ModelReply]]


class NativeUnavailable(ValueError):
    """`context_native="on"` where the run cannot have it: no budget, or a provider without its own form."""


def native_form(config: RunConfig) -> NativeForm | None:
    """The provider form a run with this config uses, or None for toolwire's own. "auto" takes the provider's own
    form on its own endpoint (not through a custom --base-url, which may be another server speaking the format)."""
    mode = config.context_native
    if mode == "off":
        return None
    if config.context_budget is None:
        if mode == "on":
            raise NativeUnavailable("--context-native on keeps a context budget: add --context-budget TOKENS")
        return None
    prefix = config.model.split(":", 1)[0]
    form = FORMS.get(prefix)
    if mode == "on" and form is None:
        raise NativeUnavailable(
            f"--context-native on: the {prefix} provider has no context management of its own (anthropic and "
            "openai-responses have); use --context-native auto or off"
        )
    if mode == "auto" and config.base_url is not None:
        return None
    if mode == "auto" and form == "anthropic":
        return "anthropic-compaction"  # toolwire's clearing measured cheaper than the provider's (module docstring)
    return form


def prepared(model: Model, form: NativeForm | None, budget: int | None) -> Model:
    """The model an Agent of this form asks: Anthropic's adapter sending the context editing on every request, as
    a copy of its own (on the same HTTP client), so the model passed in, and a sub-agent's copy without it, send
    what their own configs say. Any other model is returned as it is."""
    if not isinstance(model, AnthropicModel):
        return model
    editing = anthropic_native.editing(budget) if form == "anthropic" and budget is not None else None
    if model.context_management == editing:
        return model
    copied = copy.copy(model)
    copied.context_management = editing
    return copied


class _Compactor(WrappedModel):
    """The run's model, its `complete` sending the provider's compaction request instead of a turn."""

    def __init__(self, inner: Model, compaction: Compaction) -> None:
        super().__init__(inner)
        self.compaction = compaction

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None = None
    ) -> ModelReply:
        return await self.compaction(self.inner, messages, tools, max_output_tokens)


def compactor(model: Model, form: NativeForm) -> Model:
    """The model a compact step of this form asks: the provider's compaction endpoint for its own adapter; any other
    model (a replay's record, a scripted model) answers it as it answers every request."""
    if form in ("anthropic", "anthropic-compaction") and isinstance(model, AnthropicModel):
        return _Compactor(model, anthropic_native.compact)
    if form == "openai-responses" and isinstance(model, OpenAIResponsesModel):
        return _Compactor(model, openai_compact.compact)
    return model
