"""The form generated from a requested JSON schema (ui/forms.py, the seam for input requests): what it asks, and
the posted answer read back, checked against the schema; hostile or wrong answers are refused with the field."""

import pytest

from toolwire_client.ui.forms import FormRefused, form_values, render_fields

SCHEMA = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "title": "Why <b>"},
        "amount": {"type": "integer", "minimum": 1},
        "express": {"type": "boolean"},
        "channel": {"type": "string", "enum": ["email", "phone"]},
    },
    "required": ["reason", "amount"],
}


def test_the_form_asks_each_field_and_escapes_titles() -> None:
    html = render_fields(SCHEMA)
    assert 'name="f.reason" required' in html and "Why &lt;b&gt; *" in html
    assert 'type="number" name="f.amount" step="1" required' in html
    assert 'type="checkbox" name="f.express"' in html and '<option value="phone">' in html


def test_the_answer_is_read_back_as_json_that_fits() -> None:
    posted = {"f.reason": "damaged", "f.amount": "3", "f.express": "true", "f.channel": "email", "f.other": "x"}
    assert form_values(SCHEMA, posted) == {"reason": "damaged", "amount": 3, "express": True, "channel": "email"}


@pytest.mark.parametrize(
    ("posted", "said"),
    [
        ({"f.reason": "x", "f.amount": "three"}, "'amount': 'three' is not an integer"),
        ({"f.reason": "x", "f.amount": "0"}, "amount: 0 is less than the minimum of 1"),
        ({"f.amount": "2"}, "'reason' is a required property"),
        ({"f.reason": "x", "f.amount": "2", "f.channel": "fax"}, "channel: 'fax' is not one of"),
    ],
)
def test_a_wrong_answer_is_refused_naming_the_field(posted: dict[str, str], said: str) -> None:
    with pytest.raises(FormRefused, match=said.replace("(", r"\(")):
        form_values(SCHEMA, posted)


def test_a_schema_a_form_cannot_ask_is_refused() -> None:
    with pytest.raises(FormRefused, match="'items': type 'array' cannot be asked"):
        render_fields({"type": "object", "properties": {"items": {"type": "array"}}})
