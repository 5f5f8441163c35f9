"""A tool result's images and audio in each provider's wire form, and which of them a model is sent.

Every part is described in the result's text too, so a model sent none still knows it was there. `MediaMode`
(RunConfig.media, `toolwire run --media`): "on" sends what the wire form takes; "off" sends text only; "auto" sends
images to the provider's own endpoint and nothing to a custom base URL (a compatible server may run a text-only
model, such as a small local one, which would refuse the request), and audio only to a Chat Completions model
named for audio (the only wire form here with an audio part; other models refuse it)."""

from typing import Any, Literal, get_args

from toolwire_shared.media import MediaKind, MediaPart
from toolwire_shared.messages import ToolResultMessage

MediaMode = Literal["auto", "on", "off"]
MEDIA_MODES: tuple[str, ...] = get_args(MediaMode)

NO_MEDIA: frozenset[MediaKind] = frozenset()


def media_kinds(mode: MediaMode, *, official: bool, takes: frozenset[MediaKind], model: str) -> frozenset[MediaKind]:
    """The kinds a model is sent: of those its wire form `takes`, what `mode` allows; `official`: the provider's
    own endpoint (no custom base URL)."""
    if mode == "off":
        return NO_MEDIA
    if mode == "on":
        return takes
    kinds: set[MediaKind] = {"image"} if official else set()
    if official and "audio" in model.lower():
        kinds.add("audio")
    return frozenset(kinds) & takes


def sent(message: ToolResultMessage, kinds: frozenset[MediaKind]) -> list[MediaPart]:
    """The parts of `message` this model is sent (audio only in a format it names)."""
    return [p for p in message.media if p.kind in kinds and (p.kind == "image" or p.audio_format is not None)]


def anthropic_content(message: ToolResultMessage, kinds: frozenset[MediaKind]) -> str | list[dict[str, Any]]:
    """A `tool_result` block's content: the text, then an `image` block per image (Anthropic takes no audio)."""
    parts = sent(message, kinds & {"image"})
    if not parts:
        return message.content
    blocks: list[dict[str, Any]] = [{"type": "text", "text": message.content}] if message.content else []
    for part in parts:
        source = {"type": "base64", "media_type": part.mime_type, "data": part.data}
        blocks.append({"type": "image", "source": source})
    return blocks


def responses_output(message: ToolResultMessage, kinds: frozenset[MediaKind]) -> str | list[dict[str, Any]]:
    """A `function_call_output` item's output: the text, then an `input_image` (a data URL) per image."""
    parts = sent(message, kinds & {"image"})
    if not parts:
        return message.content
    items: list[dict[str, Any]] = [{"type": "input_text", "text": message.content}] if message.content else []
    items += [{"type": "input_image", "image_url": part.data_url} for part in parts]
    return items


def chat_followup(results: list[ToolResultMessage], kinds: frozenset[MediaKind]) -> dict[str, Any] | None:
    """Chat Completions: a `role: tool` message takes only text, so a turn's images and audio follow all its tool
    messages in one `user` message, each part after a line naming the call it came from; None when there are none."""
    content: list[dict[str, Any]] = []
    for message in results:
        parts = sent(message, kinds)
        if not parts:
            continue
        content.append({"type": "text", "text": f"The {message.name} call ({message.call_id}) returned:"})
        for part in parts:
            if part.kind == "image":
                content.append({"type": "image_url", "image_url": {"url": part.data_url}})
            else:
                content.append({"type": "input_audio", "input_audio": {"data": part.data, "format": part.audio_format}})
    return {"role": "user", "content": content} if content else None
