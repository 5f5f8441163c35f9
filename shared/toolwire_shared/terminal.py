"""Untrusted text (a model's output, a call's arguments and result, a server's question, message or name) as a
terminal shows it: exactly, and inert. Every CLI line or table cell of such text passes through here.

`shown` writes each control character but newline and tab (C0, DEL, C1) as a visible escape, `\\x1b`, and each
bidirectional or zero-width formatting character as `\\u202e`: an escape sequence from a server (clear the screen,
OSC 52 to write the clipboard, a carriage return over a line) is shown, never run, and text that reorders or hides
itself is shown as it is stored. `inert` is the same text as a Rich `Text`, which Rich never reads as markup:
`[x HIDDEN]` or `[bold red on red]...[/]` shows as written, so what a person reads is what an approval binds."""

import re

from rich.text import Text

_INVISIBLE = "\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
"""Bidirectional controls and zero-width characters: an override (U+202E) shows `A123` for what is `321A`, a zero-width
space makes two names that look alike differ. Shown as `\\u202e`, so what a person reads is what is bound."""
_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_INVISIBLE}]")
"""C0 but tab (\\x09) and newline (\\x0a), DEL, C1, and the invisible formatting characters above."""
_UNESCAPED_IN_JSON = re.compile(f"[\\x7f-\\x9f{_INVISIBLE}]")
"""What a JSON encoder writing UTF-8 leaves as it is (it escapes C0 itself): DEL, C1, the invisible characters."""


def _visible(found: re.Match[str]) -> str:
    code = ord(found[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: object) -> str:
    """`text` with its control characters (but newline and tab) written as `\\xNN`: for plain output (click.echo,
    a Rich print with markup off)."""
    return _CONTROL.sub(_visible, str(text))


def inert(text: object) -> Text:
    """`shown(text)` as a Rich Text: for a table cell or a Rich print, where a plain string would be read as markup."""
    return Text(shown(text))


def inert_json(document: str) -> str:
    """A JSON document (written with non-ASCII kept as it is) with DEL and C1 escaped as `\\u00XX`: the same data,
    and nothing a terminal acts on when it is printed there."""
    return _UNESCAPED_IN_JSON.sub(lambda found: f"\\u{ord(found[0]):04x}", document)
