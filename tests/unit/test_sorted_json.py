"""The hot path's sorted-key JSON (a call's signature, its arguments' hash) writes exactly what json.dumps writes:
an approval's hash and the repeat guard's count must match those of runs saved before it."""

import hashlib
import json
from typing import Any

import pytest

from toolwire_client.run.pending import args_hash
from toolwire_shared.messages import ToolCall
from toolwire_shared.sorted_json import sorted_dumps

VALUES: list[Any] = [
    {},
    {"text": "step 1"},
    {"b": [1, 2.5, None, True, False, {"z": 'é☃\n"\\', "a": 1e100}], "a": -0.0, "c": 10**30},
    {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")},
    {"é": 1, "a": "\u2028", "nested": {"m": [], "k": {}}},
    [1, {"b": 1, "a": 2}],
    "a string",
    12,
    None,
]


@pytest.mark.parametrize("value", VALUES)
def test_the_same_text_as_json_dumps(value: Any) -> None:
    assert sorted_dumps()(value) == json.dumps(value, sort_keys=True)
    assert sorted_dumps(",", ":")(value) == json.dumps(value, sort_keys=True, separators=(",", ":"))


def test_a_value_json_cannot_write_is_the_same_error() -> None:
    for bad in ({"a": object()}, {1: 1, "a": 2}, {"a": {1, 2}}):
        with pytest.raises(TypeError):
            json.dumps(bad, sort_keys=True)
        with pytest.raises(TypeError):
            sorted_dumps()(bad)


def test_signature_and_hash_as_before() -> None:
    call = ToolCall(id="c1", name="get_order", arguments={"order_id": "A123", "full": True})
    assert call.signature == 'get_order({"full": true, "order_id": "A123"})'
    assert args_hash(call.arguments) == hashlib.sha256(b'{"full":true,"order_id":"A123"}').hexdigest()
