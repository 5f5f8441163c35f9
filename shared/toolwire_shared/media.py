"""Images and audio a tool returned, as the run keeps them: each part typed and checked once here (a type every
provider takes, valid base64, within the size limit), so an adapter only spells a part in its wire form and a
hostile server cannot make the run's next request fail."""

import base64
import binascii
from typing import Literal

from pydantic import BaseModel, ConfigDict

MediaKind = Literal["image", "audio"]

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The image types both Anthropic and OpenAI take; another (svg, tiff) is described, never sent."""
AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}
"""Audio types a provider's audio input takes (OpenAI Chat `input_audio`: wav or mp3), by the format it names."""

MAX_MEDIA_BYTES = 1_000_000
"""Images and audio of one result, decoded, at most: a part past it is replaced by its description and a note. Not
counted against the text cap (`max_result_chars`): a provider bills an image by its pixels, not its base64 length."""


class MediaPart(BaseModel):
    """One image or audio clip of a tool result, base64 as the server sent it."""

    model_config = ConfigDict(frozen=True)

    kind: MediaKind
    mime_type: str
    data: str

    @property
    def size(self) -> int:
        """Decoded bytes."""
        return len(self.data) * 3 // 4 - self.data[-2:].count("=")

    @property
    def label(self) -> str:
        """`image/png 4.0 kB`: what the step table shows."""
        return f"{self.mime_type} {human_size(self.size)}"

    @property
    def data_url(self) -> str:
        return f"data:{self.mime_type};base64,{self.data}"

    @property
    def audio_format(self) -> str | None:
        return AUDIO_FORMATS.get(self.mime_type) if self.kind == "audio" else None


def human_size(size: int) -> str:
    if size < 1000:
        return f"{size} B"
    if size < 1_000_000:
        return f"{size / 1000:.1f} kB"
    return f"{size / 1_000_000:.1f} MB"


def describe(part: MediaPart) -> str:
    """The line the model reads in the result's text for a part (also what a model that takes no media gets)."""
    return f"[{part.kind}: {part.mime_type}, {human_size(part.size)}]"


def accepted(kind: MediaKind, mime_type: str, data: str, room: int) -> tuple[MediaPart | None, str]:
    """The part a tool's image or audio block becomes, with its line for the text; None and a line saying why for
    one that is not sent: a type no provider takes, data that is not base64, or past `room` bytes still free."""
    mime = mime_type.strip().lower()
    part = MediaPart(kind=kind, mime_type=mime, data=data)
    line = describe(part)
    if (kind == "image" and mime not in IMAGE_TYPES) or (kind == "audio" and mime not in AUDIO_FORMATS):
        return None, f"{line[:-1]}: not sent, models take no {mime}]"
    if part.size > room:  # before decoding it: a huge part costs no more than its length
        limit = human_size(MAX_MEDIA_BYTES)
        return None, f"{line[:-1]}: not sent, over the {limit} limit for one result's images and audio; ask for less]"
    if not _is_base64(data):
        return None, f"{line[:-1]}: not sent, its data is not valid base64]"
    return part, line


class MediaBudget:
    """The images and audio of one answer, sent while they fit MAX_MEDIA_BYTES together (the first come first): the
    one bookkeeping of a tool result's blocks and a resources/read answer's blobs."""

    __slots__ = ("parts", "room")

    def __init__(self) -> None:
        self.parts: list[MediaPart] = []
        self.room = MAX_MEDIA_BYTES

    def line(self, kind: MediaKind, mime_type: str, data: str) -> str:
        """The line the answer's text gets for this block; the part is kept to be sent if `accepted` takes it."""
        part, line = accepted(kind, mime_type, data, self.room)
        if part is not None:
            self.parts.append(part)
            self.room -= part.size
        return line


def _is_base64(data: str) -> bool:
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    return bool(data)
