"""Anthropic SSE streams reassembled into the same message body a non-streamed call returns.

Nothing is acted on until the whole message is in, so an `error` event mid-stream (e.g. overloaded_error) can be
retried like a 529: no tool call from the broken stream has run.
"""

import json
from typing import Any

from toolwire_client.models.json_fields import member
from toolwire_client.models.retry import AttemptFailed, Failure
from toolwire_client.models.sse import json_object


class MessageAssembler:
    """Folds stream events into a Messages API `message` body (content blocks, stop_reason, usage)."""

    def __init__(self) -> None:
        self.message: dict[str, Any] | None = None
        self.partial_json: dict[int, str] = {}
        self.done = False

    def feed(self, name: str | None, data: str) -> str | None:
        """One SSE frame; returns the text of a text_delta (shown live), else None."""
        event = json_object(data)
        if event is None:
            return None
        self._event(event)
        delta = event.get("delta")
        if event.get("type") == "content_block_delta" and isinstance(delta, dict) and delta.get("type") == "text_delta":
            return str(delta.get("text", ""))
        return None

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "error":
            err = member(event, "error")
            label = str(err.get("type") or "error")
            raise AttemptFailed(Failure(f"{label} mid-stream", str(err.get("message") or ""), None, True))
        if kind == "message_start":
            self.message = dict(event["message"])
            self.message["content"] = []
            return
        if self.message is None:
            return  # ping or an unknown event before message_start
        content: list[dict[str, Any]] = self.message["content"]
        if kind == "content_block_start":
            content.append(dict(event["content_block"]))
        elif kind == "content_block_delta":
            self._delta(content[event["index"]], event["index"], event.get("delta", {}))
        elif kind == "content_block_stop":
            self._finish_block(content[event["index"]], event["index"])
        elif kind == "message_delta":
            self.message.update({k: v for k, v in event.get("delta", {}).items()})
            usage = dict(self.message.get("usage") or {})
            usage.update({k: v for k, v in (event.get("usage") or {}).items() if v is not None})
            self.message["usage"] = usage
            if event.get("context_management") is not None:  # what context editing cleared (anthropic_native.py)
                self.message["context_management"] = event["context_management"]
        elif kind == "message_stop":
            self.done = True
        # ping and event types added later are ignored, as the API docs ask

    def _delta(self, block: dict[str, Any], index: int, delta: dict[str, Any]) -> None:
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + delta.get("text", "")
        elif kind == "input_json_delta":
            self.partial_json[index] = self.partial_json.get(index, "") + delta.get("partial_json", "")
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
        elif kind == "signature_delta":
            block["signature"] = delta.get("signature", "")
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(delta.get("citation"))

    def _finish_block(self, block: dict[str, Any], index: int) -> None:
        if index not in self.partial_json:
            return
        raw = self.partial_json.pop(index)
        try:
            block["input"] = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            block["input"] = raw  # becomes a ToolCall with parse_error, answered with an error, never run

    def result(self) -> dict[str, Any]:
        if self.message is None or not self.done:
            raise AttemptFailed(Failure("a stream cut short", "no message_stop event", None, True))
        return self.message
