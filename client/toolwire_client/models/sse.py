"""The one SSE reader every streaming adapter uses, and the seam where text deltas reach `on_text`.

Each wire format brings a StreamAssembler that folds events into the body a non-streamed call would have returned;
`read_stream` feeds it frame by frame and hands every text delta it reports to the caller's callback, so showing
text live is one line here rather than a branch in each adapter.
"""

import json
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

import httpx2

OnText = Callable[[str], None]
"""Called with each piece of answer text as it streams in, in order."""


class StreamAssembler(Protocol):
    def feed(self, event: str | None, data: str) -> str | None:
        """Fold one SSE frame in; return the answer text it adds, if any. Raise AttemptFailed for an error event."""
        ...

    def result(self) -> dict[str, Any]:
        """The whole reply body; raise AttemptFailed when the stream ended before its final event."""
        ...


async def sse_events(response: httpx2.Response) -> AsyncIterator[tuple[str | None, str]]:
    """(event name, data) per SSE frame; comments and empty frames are skipped."""
    event: str | None = None
    data: list[str] = []
    async for line in response.aiter_lines():
        if line == "":
            if data:
                yield event, "\n".join(data)
            event, data = None, []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        yield event, "\n".join(data)


async def read_stream(response: httpx2.Response, assembler: StreamAssembler, on_text: OnText | None) -> dict[str, Any]:
    async for event, data in sse_events(response):
        text = assembler.feed(event, data)
        if text and on_text is not None:
            on_text(text)
    return assembler.result()


def json_object(data: str) -> dict[str, Any] | None:
    """A frame's data as a JSON object; None for anything else (`[DONE]`, keep-alives, junk)."""
    try:
        payload = json.loads(data)
    except json.JSONDecodeError:
        return None
    return payload if isinstance(payload, dict) else None
