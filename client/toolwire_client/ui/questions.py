"""A tool's question to a person (MCP elicitation) as a card of the decisions and run pages: the server's message,
then a form generated from the requested schema (forms.py) or, in URL mode, the URL to go to; posting to
`/runs/RUN/requests/CALL/answer` with accept, decline or cancel. Everything the server sent is escaped, and only an
http(s) URL becomes a link (a server may send anything as its URL)."""

from collections.abc import Mapping
from html import escape
from urllib.parse import urlsplit

from toolwire_client.run.state import PendingCall
from toolwire_client.ui.forms import FormRefused, render_fields


def e(value: object) -> str:
    return escape(str(value), quote=True)


def question_card(
    run_id: str,
    pending: PendingCall,
    head: str,
    csrf: str,
    back: str,
    *,
    refused: str | None = None,
    posted: Mapping[str, str] | None = None,
) -> str:
    """The card for the question `pending` waits on; `head`: the lines saying which run and call (pages.py draws
    them as for an approval); `refused`: why the last answer was not recorded, shown above the form again filled
    with what was `posted`."""
    call, asked = pending.call, pending.input
    action = f"/runs/{e(run_id)}/requests/{e(call.id)}/answer"
    if asked is None:
        body, can_accept = (
            '<p class="refused">the question was not saved with the call; it cannot be answered</p>',
            False,
        )
    elif asked.mode == "url":
        body, can_accept = _url_body(asked.url or ""), True
    else:
        body, can_accept = _form_body(run_id, call.id, asked.requested_schema or {}, posted)
    message = f'<p class="asks">the tool asks: <strong>{e(asked.message)}</strong></p>' if asked else ""
    error = f'<p class="refused" id="answer-refused">not recorded: {e(refused)}</p>' if refused else ""
    accept = "I went there / accept" if asked is not None and asked.mode == "url" else "Answer"
    buttons = (f'<button name="action" value="accept" class="approve">{accept}</button> ' if can_accept else "") + (
        '<button name="action" value="decline" class="reject" formnovalidate>Decline</button> '
        '<button name="action" value="cancel" formnovalidate>Cancel</button>'
    )
    return (
        f'<form method="post" action="{action}" class="card question" data-run="{e(run_id)}" data-call="{e(call.id)}">'
        f"{head}{message}{body}{error}"
        f'<input type="hidden" name="csrf" value="{e(csrf)}"><input type="hidden" name="next" value="{e(back)}">'
        f'<div class="buttons">{buttons}</div>'
        '<p class="binds">The answer is recorded once, with your name, and sent to the tool when the run goes on; '
        "decline or cancel tells the tool you did not answer.</p></form>"
    )


def _form_body(
    run_id: str, call_id: str, schema: Mapping[str, object], posted: Mapping[str, str] | None
) -> tuple[str, bool]:
    try:
        return f'<div class="fields">{render_fields(schema, posted)}</div>', True
    except FormRefused as exc:
        said = f"this question cannot be answered in a form here ({exc}); answer it with `toolwire answer {run_id} "
        return f"<p class=\"refused\">{e(said)}{e(call_id)} --value '{{...}}'`</p>", False


def _url_body(url: str) -> str:
    shown = e(url)
    if urlsplit(url).scheme in ("http", "https"):
        link = f'<a href="{shown}" target="_blank" rel="noopener noreferrer" class="asked-url">{shown}</a>'
    else:
        link = f"<code>{shown}</code> (not a web address: not linked)"
    return f"<p>go to {link}, do what it asks there, then come back and say so here</p>"
