"""A loopback model provider for tests: a real HTTP server on 127.0.0.1 speaking the Anthropic Messages and
OpenAI Chat Completions wire formats, answering from a queue of replies (or a responder function) and recording
every request it got.

    with FakeProvider() as fake:
        fake.push(fixture_reply("anthropic_1_parallel_tool_use.json"))
        model = AnthropicModel("claude-sonnet-4-5", api_key="sk-ant-test", base_url=fake.anthropic_url)
        ...
        fake.requests[0].body  # what the adapter really sent

Replies come from copies of the provider fixtures in tests/fixtures/providers/ or from the builders below.
"""

import json
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


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    """Lower-cased header names."""
    body: Any


Responder = Callable[[RecordedRequest], Reply]


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
                if reply.sse is not None:
                    payload = "".join(_frame(event, data) for event, data in reply.sse).encode()
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
                self.wfile.write(payload)

        return Handler


def _frame(event: str | None, data: Any) -> str:
    text = data if isinstance(data, str) else json.dumps(data)
    return (f"event: {event}\n" if event else "") + f"data: {text}\n\n"
