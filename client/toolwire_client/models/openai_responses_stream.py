"""Responses API SSE events reassembled into the `response` body a non-streamed call returns.

Items are kept by `output_index`: text and function-call arguments are joined from their delta events, and
`response.output_item.done` then replaces the item with the whole one the server sends. The stream is whole only
once `response.completed` (or `.incomplete` / `.failed`) arrives; an `error` event, or a stream that ends before,
fails the attempt, and the retry policy sends the request again.
"""

from typing import Any

from toolwire_client.models.openai_chat_stream import mid_stream_failure
from toolwire_client.models.retry import AttemptFailed, Failure
from toolwire_client.models.sse import json_object

FINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})


class ResponsesAssembler:
    def __init__(self) -> None:
        self.response: dict[str, Any] = {}
        self.items: dict[int, dict[str, Any]] = {}
        self.index_of: dict[str, int] = {}
        """item id -> output_index, for events that name only the item."""
        self.done = False

    def feed(self, event: str | None, data: str) -> str | None:
        payload = json_object(data)
        if payload is None:
            return None
        kind = payload.get("type") or event
        if kind == "error":
            raise AttemptFailed(stream_error(payload))
        if kind in ("response.created", "response.in_progress") or kind in FINAL_EVENTS:
            if isinstance(payload.get("response"), dict):
                self.response = payload["response"]
            self.done = self.done or kind in FINAL_EVENTS
        elif kind in ("response.output_item.added", "response.output_item.done"):
            self._put(payload)
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            return self._text_delta(payload, "output_text" if kind == "response.output_text.delta" else "refusal")
        elif kind == "response.function_call_arguments.delta":
            item = self._item(payload)
            if item is not None:
                item["arguments"] = str(item.get("arguments") or "") + str(payload.get("delta") or "")
        elif kind == "response.function_call_arguments.done":
            item = self._item(payload)
            if item is not None and isinstance(payload.get("arguments"), str):
                item["arguments"] = payload["arguments"]
        return None  # response.content_part.*, reasoning summaries and event types added later need nothing

    def _put(self, payload: dict[str, Any]) -> None:
        item, index = payload.get("item"), payload.get("output_index")
        if not isinstance(item, dict):
            return
        if not isinstance(index, int):
            index = self.index_of.get(str(item.get("id")), len(self.items))
        self.items[index] = dict(item)
        if item.get("id"):
            self.index_of[str(item["id"])] = index

    def _item(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        index = payload.get("output_index")
        if not isinstance(index, int):
            index = self.index_of.get(str(payload.get("item_id")))
        return self.items.get(index) if isinstance(index, int) else None

    def _text_delta(self, payload: dict[str, Any], part_type: str) -> str | None:
        delta = payload.get("delta")
        if not isinstance(delta, str) or not delta:
            return None
        item = self._item(payload)
        if item is not None:
            parts = item.setdefault("content", [])
            at = payload.get("content_index")
            at = at if isinstance(at, int) else max(len(parts) - 1, 0)
            while len(parts) <= at:
                parts.append({"type": part_type, "text": ""} if part_type == "output_text" else {"type": part_type})
            field = "text" if part_type == "output_text" else "refusal"
            parts[at][field] = str(parts[at].get(field) or "") + delta
        return delta

    def result(self) -> dict[str, Any]:
        if not self.done:
            raise AttemptFailed(Failure("a stream cut short", "no response.completed event", None, True))
        body = dict(self.response)
        if self.items:
            body["output"] = [self.items[i] for i in sorted(self.items)]
        return body


def stream_error(payload: dict[str, Any]) -> Failure:
    """An `error` event (`{"type": "error", "code", "message"}`, or the error nested): named by its code."""
    err: dict[str, Any] = payload["error"] if isinstance(payload.get("error"), dict) else payload
    kind = err.get("type") if err.get("type") not in (None, "error") else err.get("code")
    return mid_stream_failure({"error": {"type": kind, "message": err.get("message") or "", "code": err.get("code")}})
