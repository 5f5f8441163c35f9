"""The provider side of the native context tests: a responder for each wire format that reads one page a turn and
answers the provider's own context management as the provider documents it (Anthropic's `applied_edits` and its
compaction block, OpenAI's `responses/compact` items). Each reply is a function of the request alone (the page after
the last result it carries), so a request sent again after a crash is answered as it was the first time."""

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from context.script import SUMMARY, THOUGHT
from helpers.fake_providers import (
    RecordedRequest,
    Reply,
    anthropic_message,
    responses_call,
    responses_message,
    responses_reply,
)


def _last_result(body: dict[str, Any]) -> str | None:
    found = None
    for message in body.get("messages", body.get("input", [])):
        if message.get("type") == "function_call_output":
            found = message["call_id"]
        for block in message.get("content") if isinstance(message.get("content"), list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found = block["tool_use_id"]
    return found


def next_page(body: dict[str, Any]) -> int:
    last = _last_result(body)
    return 1 if last is None else int(last.removeprefix("p")) + 1


@dataclass
class NativeAnthropic:
    """Anthropic Messages: reports clearing once a request carries more than `keep` results, and answers a request
    with `compaction` with one compaction block."""

    pages: int
    keep: int = 3
    compactions: list[RecordedRequest] = field(default_factory=list)

    def __call__(self, request: RecordedRequest) -> Reply:
        body = request.body
        upto = _last_result(body)
        if "compaction" in body:
            self.compactions.append(request)
            block = {"type": "compaction", "content": f"{SUMMARY} (up to {upto})", "signature": f"sig-{upto}"}
            usage = {
                "input_tokens": 0,
                "output_tokens": 0,
                "iterations": [{"type": "compaction", "input_tokens": 900, "output_tokens": 60}],
            }
            return Reply(
                body={**anthropic_message().body, "content": [block], "stop_reason": "compaction", "usage": usage}
            )
        results = json.dumps(body["messages"]).count('"tool_result"')
        n = next_page(body)
        calls = [(f"p{n}", "page", {"n": n})] if n <= self.pages else []
        reply = anthropic_message(
            THOUGHT if calls else "done: every page read", calls, usage={"input_tokens": 900, "output_tokens": 5}
        )
        if results > self.keep:
            cleared = {"type": "clear_tool_uses_20250919", "cleared_tool_uses": results - self.keep}
            reply.body["context_management"] = {
                "applied_edits": [{**cleared, "cleared_input_tokens": 4_000 * (results - self.keep)}]
            }
        return reply


@dataclass
class NativeResponses:
    """OpenAI Responses: `/responses/compact` answered with the user messages and one compaction item; the turn
    whose request is `hang_at` (a page number) waits until `release` is set (the test kills the run meanwhile)."""

    pages: int
    hang_at: int | None = None
    release: threading.Event = field(default_factory=threading.Event)
    hung: threading.Event = field(default_factory=threading.Event)

    def __call__(self, request: RecordedRequest) -> Reply:
        body = request.body
        upto = _last_result(body)
        if request.path.endswith("/responses/compact"):
            users = [item for item in body["input"] if item.get("role") == "user"]
            kept = [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": u["content"]}]}
                for u in users
            ]
            item = {"type": "compaction", "id": f"cmp_{upto}", "encrypted_content": f"enc-upto-{upto}"}
            usage = {"input_tokens": 700, "output_tokens": 80, "total_tokens": 780}
            return Reply(
                body={
                    "id": "resp_cmp",
                    "object": "response.compaction",
                    "created_at": 1764664860,
                    "output": [*kept, item],
                    "usage": usage,
                }
            )
        n = next_page(body)
        if n == self.hang_at and not self.release.is_set():
            self.hung.set()
            self.release.wait(60)
        if n > self.pages:
            return responses_reply([responses_message("done: every page read")])
        usage = {"input_tokens": 900, "output_tokens": 5, "total_tokens": 905}
        return responses_reply(
            [responses_message(THOUGHT), responses_call(f"p{n}", "page", json.dumps({"n": n}))], usage=usage
        )
