"""The waterfall drawing: bars on one time axis, parallel calls over the same stretch, errors and retries marked."""

from datetime import UTC, datetime, timedelta

from toolwire_client.cli.waterfall import ERROR_BAR, MODEL_BAR, TOOL_BAR, bars, waterfall_text
from toolwire_client.run.state import PendingCall, RunState, StepRecord, args_hash
from toolwire_shared.messages import ToolCall
from toolwire_shared.results import ToolResult
from toolwire_shared.usage import Usage

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def run_with_parallel_calls_error_retry_and_approval() -> RunState:
    get = ToolCall(id="c1", name="get_order", arguments={"id": "A123"})
    search = ToolCall(id="c2", name="search_orders", arguments={"customer": "A123"})
    fixed = ToolCall(id="c3", name="get_order", arguments={"order_id": "A123"})
    refund = ToolCall(id="c4", name="issue_refund", arguments={"order_id": "A123", "amount_cents": 2500})
    step1 = StepRecord(
        index=1,
        started_at=at(0),
        finished_at=at(2.0),
        model_latency_s=1.0,
        tool_calls=[get, search],
        usage=Usage(input_tokens=1600, output_tokens=150),
        results=[
            ToolResult(
                call_id="c1",
                name="get_order",
                content="ERROR: bad arguments",
                is_error=True,
                error_kind="bad_arguments",
                duration_s=0.2,
                started_at=at(1.0),
            ),
            ToolResult(
                call_id="c2", name="search_orders", content="[]", duration_s=1.0, started_at=at(1.0), attempts=2
            ),
        ],
    )
    step2 = StepRecord(
        index=2,
        started_at=at(2.0),
        finished_at=at(4.0),
        model_latency_s=1.5,
        tool_calls=[fixed],
        results=[ToolResult(call_id="c3", name="get_order", content="{}", duration_s=0.5)],
    )
    step3 = StepRecord(index=3, started_at=at(4.0), model_latency_s=0.5, tool_calls=[refund])
    return RunState(
        run_id="run_x",
        agent_name="support",
        task="refund A123",
        model="scripted",
        status="waiting_for_approval",
        started_at=T0,
        steps=[step1, step2, step3],
        pending=[PendingCall(call=refund, state="pending_approval", args_hash=args_hash(refund.arguments))],
    )


def test_bars_place_calls_on_the_run_clock() -> None:
    rows = bars(run_with_parallel_calls_error_retry_and_approval())
    labels = [b.label for b in rows]
    assert labels == [
        "1 model",
        "1 ├ get_order",
        "1 └ search_orders",
        "2 model",
        "2 └ get_order",
        "3 model",
        "3 └ issue_refund",
    ]
    by = dict(zip(labels, rows, strict=True))
    # the two parallel calls start together, after the model call that asked for them
    assert by["1 ├ get_order"].start_s == by["1 └ search_orders"].start_s == 1.0
    # no recorded start: the call is placed right after its model call
    assert by["2 └ get_order"].start_s == 3.5
    assert by["1 ├ get_order"].kind == "error" and "bad_arguments" in by["1 ├ get_order"].mark
    assert "2 attempts" in by["1 └ search_orders"].mark
    assert "retry after error" in by["2 └ get_order"].mark
    assert by["3 └ issue_refund"].kind == "waiting" and "pending approval" in by["3 └ issue_refund"].mark


def test_text_drawing_shows_bars_side_by_side_and_marks() -> None:
    text = waterfall_text(run_with_parallel_calls_error_retry_and_approval(), width=50)
    get_line = next(line for line in text.splitlines() if "1 ├ get_order" in line)
    search_line = next(line for line in text.splitlines() if "1 └ search_orders" in line)
    model2_line = next(line for line in text.splitlines() if line.startswith("2 model"))
    # parallel: both bars begin in the same column; the later model call begins further right
    assert get_line.index(ERROR_BAR) == search_line.index(TOOL_BAR)
    assert model2_line.index(MODEL_BAR) > search_line.index(TOOL_BAR)
    # the run lasts 4.5 s: the search bar spans 1.0 s to 2.0 s, cells int(11.1) = 11 up to round(22.2) = 22
    assert search_line.count(TOOL_BAR) == 11
    assert "✗ bad_arguments" in get_line and "↻ 2 attempts" in search_line
    assert "⏸ pending approval" in text and "run_x: waiting_for_approval, 3 steps" in text
    assert "1600→150 tok" in text


def test_empty_run_draws_without_failing() -> None:
    state = RunState(run_id="run_e", agent_name="a", task="t", model="m")
    assert "0 steps" in waterfall_text(state)
