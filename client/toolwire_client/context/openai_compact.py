"""OpenAI Responses' own compaction, as a run with a context budget uses it (context/native.py): the compact step
is `POST /responses/compact` instead of a summary written by the model in a turn.

What it relies on, as OpenAI documents it (https://platform.openai.com/docs/api-reference/responses/compact, the
guide https://developers.openai.com/api/docs/guides/compaction, and the official SDK, openai-python
src/openai/types/responses/response_compact_params.py, compacted_response.py, response_compaction_item.py): the
request takes `model` (required), `input` (the input items) and `instructions`; the response is
`{"object": "response.compaction", "output": [...], "usage": {...}}` whose `output` is every user message followed
by one item `{"type": "compaction", "id", "encrypted_content"}`, opaque, to be sent back as input on the later
requests in place of the items it stands for. The usage is a Responses usage (`input_tokens`, `output_tokens`).

Not used: server-side compaction inside `POST /responses` (`context_management` with `compact_threshold`), which
compacts inside an ordinary request when the provider decides, not as a step of its own."""

from toolwire_client import texts
from toolwire_client.models.base import Model, ModelCallFailed, ModelReply
from toolwire_client.models.openai_chat import parse_usage
from toolwire_client.models.openai_responses import ITEMS, OpenAIResponsesModel
from toolwire_shared.messages import AssistantMessage, Message
from toolwire_shared.tools import ToolSpec

PATH = "/compact"
"""Under the adapter's own path: `/responses/compact`."""


async def compact(model: Model, messages: list[Message], tools: list[ToolSpec], cap: int | None) -> ModelReply:
    """One compaction request of the messages as the model last saw them; the compacted items are the compact
    step's reply, echoed as they came on every later request (models/openai_responses.py, `assistant_items`)."""
    assert isinstance(model, OpenAIResponsesModel)
    wire = model.wire_body(messages, [], None)
    body = {"model": wire["model"], "input": wire["input"]}
    if "instructions" in wire:
        body["instructions"] = wire["instructions"]
    posted = await model._post(model.path + PATH, body)
    output = posted.data.get("output")
    items = [item for item in output if isinstance(item, dict)] if isinstance(output, list) else []
    if not any(item.get("type") == "compaction" for item in items):
        raise ModelCallFailed("openai answered responses/compact with no compaction item", status=200)
    message = AssistantMessage(text=texts.provider_compacted(len(items)), provider=ITEMS, provider_content=items)
    return posted.reply(message, parse_usage(posted.data.get("usage"), ("input", "output")), "compaction")
