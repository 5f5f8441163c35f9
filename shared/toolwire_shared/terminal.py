"""Untrusted text (a model's output, a call's arguments and result, a server's question, message or name) as a
terminal shows it: exactly, and inert. Every CLI line or table cell of such text passes through here.

`shown` writes each control character but newline and tab (C0, DEL, C1) as a visible escape, `\\x1b`: an escape
sequence from a server (clear the screen, OSC 52 to write the clipboard, a carriage return over a line) is shown, never
run. `inert` is the same text as a Rich `Text`, which Rich never reads as markup: `[x HIDDEN]` or
`[bold red on red]...[/]` shows as written, so what a person reads is what an approval binds."""

import re

from rich.text import Text

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""C0 but tab (\\x09) and newline (\\x0a), DEL, C1."""
_UNESCAPED_IN_JSON = re.compile(r"[\x7f-\x9f]")
"""What a JSON encoder writing UTF-8 leaves as it is (it escapes C0 itself): DEL, C1."""


def _visible(found: re.Match[str]) -> str:
    return f"\\x{ord(found[0]):02x}"


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
