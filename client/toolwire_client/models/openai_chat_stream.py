"""Chat Completions SSE chunks reassembled into the `chat.completion` body a non-streamed call returns.

Tool-call fragments are joined by `index`, with the local-server quirks of the provider notes: a missing index
(Gemini's compat layer) continues the last call unless the fragment names a new one, an index reused with a new id
(Ollama numbers every call 0) starts a new call, and id/name repeated in every fragment (llama-cpp-python) are set,
not appended. Only `[DONE]` marks a whole stream; without it the attempt failed and is retried.
"""

from typing import Any

from toolwire_client.models.json_fields import member
from toolwire_client.models.retry import BILLING_CODES, AttemptFailed, Failure, error_fields
from toolwire_client.models.sse import json_object


class ChatAssembler:
    def __init__(self) -> None:
        self.head: dict[str, Any] = {}
        self.text: list[str] = []
        self.refusal: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self.by_index: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.done = False

    def feed(self, event: str | None, data: str) -> str | None:
        if data.strip() == "[DONE]":
            self.done = True
            return None
        chunk = json_object(data)
        if chunk is None:
            return None
        if isinstance(chunk.get("error"), dict):
            raise AttemptFailed(mid_stream_failure(chunk))
        for key in ("id", "model", "created", "system_fingerprint"):
            if key in chunk and key not in self.head:
                self.head[key] = chunk[key]
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        choices = chunk.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        if not isinstance(first, dict):
            return None  # the include_usage chunk has choices: []
        if first.get("finish_reason"):
            self.finish_reason = str(first["finish_reason"])
        delta = first.get("delta")
        if not isinstance(delta, dict):
            return None
        for fragment in delta.get("tool_calls") or []:
            if isinstance(fragment, dict):
                self._fragment(fragment)
        shown = ""
        content, refusal = delta.get("content"), delta.get("refusal")
        if isinstance(content, str) and content:
            self.text.append(content)
            shown += content
        if isinstance(refusal, str) and refusal:
            self.refusal.append(refusal)
            shown += refusal
        return shown or None

    def _fragment(self, fragment: dict[str, Any]) -> None:
        function = member(fragment, "function")
        call = self._call_for(fragment.get("index"), fragment.get("id"), function.get("name"))
        if fragment.get("id"):
            call["id"] = fragment["id"]
        if fragment.get("type"):
            call["type"] = fragment["type"]
        if function.get("name"):
            call["function"]["name"] = function["name"]
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            previous = call["function"]["arguments"]
            call["function"]["arguments"] = (previous if isinstance(previous, str) else "") + arguments
        elif arguments is not None:  # a whole object in one fragment (Ollama, llama.cpp)
            call["function"]["arguments"] = arguments

    def _call_for(self, index: Any, call_id: Any, name: Any) -> dict[str, Any]:
        """The call this fragment continues, or a new one."""
        if isinstance(index, int):
            known = self.by_index.get(index)
            if known is not None and not (call_id and known.get("id") and call_id != known["id"]):
                return known
        elif self.calls:
            last = self.calls[-1]
            if not (call_id or name) or (call_id and call_id == last.get("id")):
                return last
        call: dict[str, Any] = {"type": "function", "function": {"name": "", "arguments": ""}}
        self.calls.append(call)
        if isinstance(index, int):
            self.by_index[index] = call
        return call

    def result(self) -> dict[str, Any]:
        if not self.done:
            raise AttemptFailed(Failure("a stream cut short", "no [DONE] line", None, True))
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text) or None}
        if self.refusal:
            message["refusal"] = "".join(self.refusal)
        if self.calls:
            message["tool_calls"] = self.calls
        choice = {"index": 0, "message": message, "finish_reason": self.finish_reason}
        return {**self.head, "object": "chat.completion", "choices": [choice], "usage": self.usage}


def mid_stream_failure(body: dict[str, Any]) -> Failure:
    """An error frame after the 200: retried like a 5xx, unless it is a billing stop."""
    kind, message, code = error_fields(body)
    billing = code in BILLING_CODES
    label = code if billing else (kind or code or "error")
    return Failure(f"{label} mid-stream", message or "", None, not billing, billing)
