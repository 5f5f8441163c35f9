"""A loopback model provider for tests: a real HTTP server on 127.0.0.1 speaking the Anthropic Messages, OpenAI Chat
Completions and OpenAI Responses (`/v1/responses`) wire formats, whole or as SSE streams (one that can be cut off
mid-way), answering from a queue of replies (or a responder function) and recording every request it got.

    with FakeProvider() as fake:
        fake.push(fixture_reply("anthropic_1_parallel_tool_use.json"))
        model = AnthropicModel("claude-sonnet-4-5", api_key="sk-ant-test", base_url=fake.anthropic_url)
        ...
        fake.requests[0].body  # what the adapter really sent

Replies come from copies of the provider fixtures in tests/fixtures/providers/ or from the builders below.
"""

import json
import re
import socket
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from .loopback import LoopbackServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "providers"


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    sse: list[tuple[str | None, Any]] | None = None
    """Server-sent events [(event name or None, data)]; data that is not a str is sent as JSON."""
    drop_after: int | None = None
    """With sse: send only this many frames, then close the connection short of the promised content-length
    (a connection lost mid-stream, which the client sees as a transport error)."""


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    """Lower-cased header names."""
    body: Any


Responder = Callable[[RecordedRequest], Reply]


def assistant_turns(request: RecordedRequest) -> int:
    """How many assistant turns an Anthropic request carries: which reply of its script a loopback model gives."""
    return sum(1 for m in request.body["messages"] if m["role"] == "assistant")


class HeldModel:
    """A loopback model whose second call waits until the test sets `gate` (set from the start unless `gated`), so
    that the test sees its run mid-way."""

    def __init__(self, *, gated: bool) -> None:
        self.gate = threading.Event()
        if not gated:
            self.gate.set()

    def hold(self, asked: int, whose: str = "the") -> None:
        """At the second call (`asked` turns before it: 1), wait for the gate; `whose` names the call in the error."""
        if asked == 1:
            assert self.gate.wait(120), f"the test never let {whose} second model call go on"


def load_fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return data


def fixture_reply(name: str) -> Reply:
    """The response half of one exchange fixture."""
    response = load_fixture(name)["response"]
    sse = response.get("sse")
    return Reply(
        status=response["status"],
        body=response.get("body"),
        headers=dict(response.get("headers", {})),
        sse=[(event, data) for event, data in sse] if sse is not None else None,
    )


def error_reply(provider: str, key: str) -> Reply:
    """One of the error bodies: error_reply('openai', '429_insufficient_quota_DO_NOT_RETRY')."""
    response = load_fixture(f"{provider}_errors.json")[key]
    return Reply(status=response["status"], body=response["body"], headers=dict(response["headers"]))


def anthropic_message(
    text: str = "",
    tool_uses: Sequence[tuple[str, str, dict[str, Any]]] = (),
    *,
    usage: dict[str, int | None] | None = None,
    extra_blocks: list[dict[str, Any]] | None = None,
) -> Reply:
    """A Messages API reply: optional extra blocks (thinking), text, then tool_use blocks (id, name, input)."""
    content: list[dict[str, Any]] = list(extra_blocks or [])
    if text:
        content.append({"type": "text", "text": text})
    content += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in tool_uses]
    body = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": "claude-fake",
        "content": content,
        "stop_reason": "tool_use" if tool_uses else "end_turn",
        "stop_sequence": None,
        "usage": usage
        or {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 5},
    }
    return Reply(body=body, headers={"content-type": "application/json", "request-id": "req_fake"})


def openai_completion(
    text: str | None = None,
    tool_calls: Sequence[dict[str, Any]] = (),
    *,
    usage: dict[str, Any] | None = None,
    finish_reason: str | None = None,
) -> Reply:
    """A Chat Completions reply. tool_calls are wire dicts, so tests can send quirky ones (no id, object args)."""
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if tool_calls:
        message["tool_calls"] = list(tool_calls)
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1764664860,
        "model": "gpt-fake",
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
            }
        ],
        "usage": usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    return Reply(body=body, headers={"content-type": "application/json", "x-request-id": "req_fake"})


def openai_call(call_id: str | None, name: str, arguments: Any) -> dict[str, Any]:
    """One wire tool call; arguments that are not a str are sent as they are (the local-server quirk)."""
    call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not None:
        call["id"] = call_id
    return call


def openai_chat_stream(
    pieces: Sequence[str] = (),
    tool_calls: Sequence[tuple[str, str, str]] = (),
    *,
    usage: dict[str, Any] | None = None,
) -> Reply:
    """A streamed Chat Completions reply: text in `pieces`, then each (id, name, JSON arguments) call split in two
    argument fragments keyed by index, the finish chunk, the include_usage chunk and [DONE]."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "gpt-fake", "choices": [choice]}

    frames: list[tuple[str | None, Any]] = [(None, chunk({"role": "assistant", "content": None}))]
    frames += [(None, chunk({"content": piece})) for piece in pieces]
    for index, (call_id, name, arguments) in enumerate(tool_calls):
        first = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        half = len(arguments) // 2
        frames.append((None, chunk({"tool_calls": [first]})))
        for part in (arguments[:half], arguments[half:]):
            frames.append((None, chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})))
    frames.append((None, chunk({}, "tool_calls" if tool_calls else "stop")))
    last = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "gpt-fake", "choices": []}
    frames.append((None, {**last, "usage": usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}))
    frames.append((None, "[DONE]"))
    return Reply(headers={"content-type": "text/event-stream"}, sse=frames)


def responses_message(text: str, item_id: str = "msg_fake") -> dict[str, Any]:
    part = {"type": "output_text", "text": text, "annotations": []}
    return {"type": "message", "id": item_id, "role": "assistant", "status": "completed", "content": [part]}


def responses_call(call_id: str, name: str, arguments: str, item_id: str | None = None) -> dict[str, Any]:
    """A function_call output item: `call_id` matches the result, the item `id` (fc_...) is its own."""
    item_id = item_id or "fc_" + call_id.removeprefix("call_")
    return {
        "type": "function_call",
        "id": item_id,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": "completed",
    }


def responses_reasoning(item_id: str = "rs_fake", encrypted: str = "gAAAA-opaque") -> dict[str, Any]:
    return {
        "type": "reasoning",
        "id": item_id,
        "summary": [{"type": "summary_text", "text": "Two lookups, both for Paris."}],
        "encrypted_content": encrypted,
    }


def responses_reply(
    output: Sequence[dict[str, Any]],
    *,
    usage: dict[str, Any] | None = None,
    status: str = "completed",
    incomplete_reason: str | None = None,
    response_id: str = "resp_fake",
) -> Reply:
    """A Responses API reply with these output items."""
    body = {
        "id": response_id,
        "object": "response",
        "created_at": 1764664860,
        "status": status,
        "model": "gpt-fake",
        "output": list(output),
        "error": None,
        "incomplete_details": {"reason": incomplete_reason} if incomplete_reason else None,
        "usage": usage
        or {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        },
    }
    return Reply(body=body, headers={"content-type": "application/json", "x-request-id": "req_fake"})


def responses_call_then_answer(call_id: str, name: str, answer: str) -> tuple[Reply, Reply]:
    """A Responses model's two turns: a call of tool `name` without arguments, then the answer."""
    return responses_reply([responses_call(call_id, name, "{}")]), responses_reply([responses_message(answer)])


def responses_stream(reply: Reply) -> Reply:
    """The same response as typed SSE events: response.created, per item output_item.added, text deltas word by
    word, function_call_arguments.delta in two halves, output_item.done with the whole item, response.completed."""
    body: dict[str, Any] = reply.body
    frames: list[tuple[str | None, Any]] = []

    def emit(kind: str, **fields: Any) -> None:
        frames.append((kind, {"type": kind, "sequence_number": len(frames), **fields}))

    emit("response.created", response={**body, "status": "in_progress", "output": [], "usage": None})
    for index, item in enumerate(body["output"]):
        at = {"output_index": index, "item_id": item.get("id")}
        if item["type"] == "message":
            emit("response.output_item.added", output_index=index, item={**item, "content": []})
            for c, part in enumerate(item["content"]):
                emit("response.content_part.added", **at, content_index=c, part={**part, "text": ""})
                for piece in re.findall(r"\S+\s*", part["text"]):
                    emit("response.output_text.delta", **at, content_index=c, delta=piece)
                emit("response.output_text.done", **at, content_index=c, text=part["text"])
                emit("response.content_part.done", **at, content_index=c, part=part)
        elif item["type"] == "function_call":
            emit("response.output_item.added", output_index=index, item={**item, "arguments": ""})
            half = len(item["arguments"]) // 2
            for piece in (item["arguments"][:half], item["arguments"][half:]):
                emit("response.function_call_arguments.delta", **at, delta=piece)
            emit("response.function_call_arguments.done", **at, arguments=item["arguments"])
        else:
            emit("response.output_item.added", output_index=index, item=item)
        emit("response.output_item.done", output_index=index, item=item)
    final = "response.incomplete" if body["status"] == "incomplete" else "response.completed"
    emit(final, response=body)
    return Reply(headers={"content-type": "text/event-stream"}, sse=frames)


class FakeProvider(LoopbackServer):
    """The server. Replies queued with push() are used first, in order; then the responder, if any; with neither
    it answers 400 so a test that asks more than it scripted fails loudly instead of retrying."""

    def __init__(self, responder: Responder | None = None) -> None:
        self.requests: list[RecordedRequest] = []
        self.responder = responder
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        super().__init__(self._handler_class(), name="fake-provider")
        self.anthropic_url = self.base_url
        self.openai_url = f"{self.base_url}/v1"

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def _answer(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return self.responder(request)
        message = f"fake provider: no reply scripted for request #{len(self.requests)} ({request.path})"
        return Reply(status=400, body={"type": "error", "error": {"type": "invalid_request_error", "message": message}})

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # headers and body go out as two writes: without this, Nagle + delayed ACK add ~40 ms per reply
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(length)
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                headers = {k.lower(): v for k, v in self.headers.items()}
                self._send(fake._answer(RecordedRequest("POST", self.path, headers, body)))

            def _send(self, reply: Reply) -> None:
                sent: bytes | None = None
                if reply.sse is not None:
                    frames = [_frame(event, data).encode() for event, data in reply.sse]
                    payload = b"".join(frames)
                    if reply.drop_after is not None:
                        sent = b"".join(frames[: reply.drop_after])
                    content_type = "text/event-stream"
                else:
                    payload = json.dumps(reply.body).encode() if reply.body is not None else b""
                    content_type = "application/json"
                self.send_response(reply.status)
                headers = {"content-type": content_type, **reply.headers}
                for name, value in headers.items():
                    if name.lower() != "content-length":
                        self.send_header(name, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload if sent is None else sent)
                if sent is not None:
                    self.wfile.flush()
                    self.close_connection = True  # the socket closes with the body short of its content-length

        return Handler


def _frame(event: str | None, data: Any) -> str:
    text = data if isinstance(data, str) else json.dumps(data)
    return (f"event: {event}\n" if event else "") + f"data: {text}\n\n"
