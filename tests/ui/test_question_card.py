"""A tool's question as the console draws it (ui/questions.py), without a server: the server's message escaped, a
form generated from its schema, a URL linked only when it is a web address (a server may send anything), and a
schema no form can ask pointing to `toolwire answer` with no accept button."""

from typing import Any

from toolwire_client.run.state import PendingCall, RunState, args_hash
from toolwire_client.ui import pages
from toolwire_client.ui.questions import question_card
from toolwire_client.ui.reads import Waiting, waits_for
from toolwire_shared.elicitation import InputWanted
from toolwire_shared.messages import ToolCall

HOSTILE = '<script>alert("x")</script>'


def asking(**question: Any) -> PendingCall:
    wanted = InputWanted(key="q1", era="2026-07-28", message=HOSTILE, **question)
    call = ToolCall(id="c1", name="book_table", arguments={})
    return PendingCall(call=call, state="pending_input", args_hash=args_hash({}), input=wanted)


def test_a_form_question_shows_its_fields_and_escapes_the_message() -> None:
    schema = {"type": "object", "properties": {"party": {"type": "integer"}}, "required": ["party"]}
    html = question_card("run_1", asking(mode="form", requested_schema=schema), "", "tok", "/decisions")
    assert HOSTILE not in html and "&lt;script&gt;" in html
    assert 'action="/runs/run_1/requests/c1/answer"' in html and 'name="f.party" step="1" required' in html
    assert 'value="accept"' in html and 'value="decline" class="reject" formnovalidate' in html
    assert 'name="csrf" value="tok"' in html


def test_only_a_web_address_becomes_a_link() -> None:
    linked = question_card("run_1", asking(mode="url", url="https://login.example.com/bank"), "", "tok", "/")
    assert '<a href="https://login.example.com/bank" target="_blank" rel="noopener noreferrer"' in linked
    assert "I went there / accept" in linked
    for hostile in ("javascript:alert(1)", "data:text/html,<script>x</script>", '" onmouseover="x'):
        html = question_card("run_1", asking(mode="url", url=hostile), "", "tok", "/")
        assert (
            "<a href" not in html and "not linked" in html and "<script>x" not in html and '" onmouseover' not in html
        )


def test_a_schema_no_form_can_ask_points_to_the_cli() -> None:
    schema = {"type": "object", "properties": {"items": {"type": "array"}}}
    html = question_card("run_1", asking(mode="form", requested_schema=schema), "", "tok", "/")
    assert "cannot be answered in a form here" in html and "toolwire answer run_1 c1 --value" in html
    assert 'value="accept"' not in html and 'value="decline"' in html


def test_the_lists_say_a_run_waits_for_an_answer() -> None:
    state = RunState(run_id="run_1", agent_name="a", task="Book", model="m", pending=[asking(mode="url", url="x")])
    state.status = "waiting_for_approval"
    assert waits_for(state) == "a person: book_table asks a question"
    fragment = pages.decide_fragment([Waiting(state, state.pending[0])], "tok", "/")
    assert 'class="card question"' in fragment and "call <code>c1</code>: tool <code>book_table</code>" in fragment
