"""Reflection: before a final answer stands, one more model call checks the draft against the run's criteria; a
draft that fails goes back to the model with what the review found, at most `max_retries` times.

The review is an ordinary exchange in the message list (the request as a user turn, the verdict as an assistant
turn), so the list stays the whole state: saved, replayed and traced like any step, its tokens counted."""

from pydantic import BaseModel, Field

from toolwire_client import texts


class Review(BaseModel):
    criteria: list[str] = Field(min_length=1)
    """What a final answer must satisfy, one check per line of the review request."""
    max_retries: int = Field(default=1, ge=0)
    """How many drafts may be sent back; the draft after the last retry is final unreviewed."""


def draft_passes(verdict: str) -> bool:
    """The review passed the draft: its reply approves only when its first word is APPROVED (nothing else counts as
    a yes)."""
    words = verdict.strip().split(maxsplit=1)
    return bool(words) and words[0].strip(".:!").upper() == texts.REVIEW_APPROVED
