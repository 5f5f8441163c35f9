"""JSON dumps with sorted keys for the hot path (a call's signature, its arguments' hash: a few a step): what
`json.dumps(value, sort_keys=True, ...)` writes, with the C encoder built once instead of on every dump (json builds
an encoder, a marker dict and a float closure per call, most of a small dump's cost)."""

import json
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any


def sorted_dumps(item_separator: str = ", ", key_separator: str = ": ") -> Callable[[Any], str]:
    """A dump function writing what json.dumps(value, sort_keys=True, separators=(item, key)) writes. No check for
    circular containers (a value that contains itself raises RecursionError, not ValueError): these are arguments,
    JSON a model wrote or a program passed."""
    fallback = json.JSONEncoder(sort_keys=True, separators=(item_separator, key_separator), check_circular=False)
    if c_make_encoder is None:  # a Python built without the _json accelerator
        return fallback.encode
    encode = c_make_encoder(
        None, fallback.default, encode_basestring_ascii, None, key_separator, item_separator, True, False, True
    )

    def dumps(value: Any) -> str:
        if isinstance(value, str):
            return encode_basestring_ascii(value)
        return "".join(encode(value, 0))

    return dumps
