"""The scripted provider side of the context-budget tests: a responder that reads one page a turn (a `note` call at
one turn, which a test may mark risky to pause the run there), then answers; a summary request (the context
budget's side exchange) is answered with a summary. It keeps its place across the processes of one run."""

from dataclasses import dataclass, field

from context.wire import Wire, system_sent
from helpers.fake_providers import RecordedRequest, Reply
from toolwire_client import texts

THOUGHT = "I have read the page; the totals so far are noted and I go on with the next page of the report. " * 4
SUMMARY = "Summary: the pages read so far and their TOTAL lines are noted; go on with the next page."


@dataclass
class PageReader:
    wire: Wire
    pages: int
    note_at: int | None = None
    input_tokens: int = 10
    turn: int = 0
    summaries: list[RecordedRequest] = field(default_factory=list)

    def __call__(self, request: RecordedRequest) -> Reply:
        if texts.COMPACT_SYSTEM in system_sent(request.body):
            self.summaries.append(request)
            return self.wire.reply(f"{SUMMARY} ({len(self.summaries)})", input_tokens=self.input_tokens)
        self.turn += 1
        if self.note_at is not None and self.turn == self.note_at:
            return self.wire.reply(THOUGHT, [("n1", "note", {"text": "halfway"})], self.input_tokens)
        page = self.turn - (1 if self.note_at is not None and self.turn > self.note_at else 0)
        if page <= self.pages:
            return self.wire.reply(THOUGHT, [(f"p{page}", "page", {"n": page})], self.input_tokens)
        return self.wire.reply("done: every page read", input_tokens=self.input_tokens)
