"""The one function untrusted text passes on its way to a terminal (toolwire_shared/terminal.py): what it shows is
what is stored, and nothing in it acts on the terminal."""

import json

import pytest
from rich.console import Console

from toolwire_shared.terminal import inert, inert_json, shown


@pytest.mark.parametrize(
    ("stored", "seen"),
    [
        ("\x1b[2J", "\\x1b[2J"),  # clear the screen
        ("\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"),  # OSC 52: write the clipboard
        ("paid\rrefund", "paid\\x0drefund"),  # a carriage return over the line
        ("\x9b31m", "\\x9b31m"),  # C1 CSI
        ("A\u202e321", "A\\u202e321"),  # right-to-left override: would show "A123"
        ("get\u200border", "get\\u200border"),  # zero-width space: two names that look alike
        ("\u2066x\u2069", "\\u2066x\\u2069"),  # isolates
        ("line one\nline\ttwo — ünïcode", "line one\nline\ttwo — ünïcode"),  # newline, tab, letters kept
    ],
)
def test_shown_writes_what_acts_or_hides_as_visible_escapes(stored: str, seen: str) -> None:
    assert shown(stored) == seen


def test_inert_is_never_read_as_markup() -> None:
    console = Console(width=200, color_system=None, record=True)
    console.print(inert('{"order_id": "A123[x HIDDEN-1 also B999]"} [bold red on red]secret[/]'))
    assert console.export_text().strip() == '{"order_id": "A123[x HIDDEN-1 also B999]"} [bold red on red]secret[/]'


def test_inert_json_is_the_same_data() -> None:
    value = {"note": "A\u202e321 \x85 \x7f ok ü"}
    document = inert_json(json.dumps(value, ensure_ascii=False))
    assert json.loads(document) == value
    assert not any(c in document for c in "\u202e\x85\x7f")
