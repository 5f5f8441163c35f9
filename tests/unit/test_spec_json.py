"""The saved config's tool definitions: one JSON dict per spec object, shared by the runs offered it (the memory of a
run at scale), equal to a fresh dump, and forgotten with its spec (no growth when listings change)."""

import gc

from toolwire_shared import tools
from toolwire_shared.tools import ToolSpec, spec_json


def test_one_dump_per_spec_equal_to_a_fresh_one_and_forgotten_with_it() -> None:
    spec = ToolSpec(name="echo", description="Echo.", output_schema={"type": "object"}, source="local")
    first = spec_json(spec)
    assert first == spec.model_dump(mode="json")
    assert spec_json(spec) is first  # the second run offered it saves the same dict
    other = ToolSpec(name="echo", description="Echo.", output_schema={"type": "object"}, source="local")
    assert spec_json(other) == first and spec_json(other) is not first  # by identity: never another spec's dump
    keys = {id(spec), id(other)}
    assert keys <= tools._dumped.keys()
    del spec, other
    gc.collect()
    assert not keys & tools._dumped.keys()  # its own two only: other tests' specs may go in the same collection
