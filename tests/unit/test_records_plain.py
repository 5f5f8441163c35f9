"""The per-step records are plain slotted dataclasses (issue 34 §3): made without validation, with no per-instance
dict or set of the fields given; one on its own dumps to the JSON a saved run holds."""

import dataclasses

import pytest

from toolwire_client.models.base import ModelReply
from toolwire_client.run.pending import PendingCall
from toolwire_client.run.state import StepRecord
from toolwire_shared.messages import AssistantMessage, SystemMessage, ToolCall, ToolResultMessage, UserMessage
from toolwire_shared.records import record_json
from toolwire_shared.results import SubRun, TaskRun, ToolResult
from toolwire_shared.usage import Usage

RECORDS = [
    ToolCall,
    SystemMessage,
    UserMessage,
    AssistantMessage,
    ToolResultMessage,
    ToolResult,
    SubRun,
    TaskRun,
    Usage,
    StepRecord,
    PendingCall,
    ModelReply,
]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.__name__)
def test_each_record_is_a_slotted_dataclass(record: type) -> None:
    assert dataclasses.is_dataclass(record) and "__slots__" in vars(record)


def test_a_record_keeps_no_dict_and_is_not_validated_when_made() -> None:
    call = ToolCall(id="c1", name="get_order", arguments={"order_id": "A123"})
    assert not hasattr(call, "__dict__")
    assert ToolResult(call_id="c1", name="get_order", content="x", duration_s=1).duration_s == 1  # as given


def test_one_record_dumps_as_a_saved_run_holds_it() -> None:
    result = ToolResult(call_id="c1", name="t", content="x", duration_s=1)
    dumped = record_json(result)
    assert dumped["duration_s"] == 1.0 and "media" not in dumped and "task" not in dumped
    assert list(dumped)[:3] == ["call_id", "name", "content"]
    assert record_json(Usage(input_tokens=3)) == {
        "input_tokens": 3,
        "output_tokens": 0,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "cache_write_1h_tokens": 0,
        "reasoning_tokens": 0,
    }
