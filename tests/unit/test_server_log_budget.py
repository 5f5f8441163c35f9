"""A server's log budget (server_logs.py) on a clock the test moves: a burst is written, what is over it dropped and
counted, and once the budget refills the next line comes after one line saying how many were dropped."""

from toolwire_client.tools.server_logs import LOG_BURST_LINES, LOG_LINES_PER_S, MAX_LOG_LINE_CHARS, LogBudget


def test_a_burst_then_drops_then_one_note_before_the_next_line() -> None:
    now = [0.0]
    budget = LogBudget(clock=lambda: now[0])
    written = [budget.admit(f"line {n}") for n in range(LOG_BURST_LINES + 5)]
    assert written[:LOG_BURST_LINES] == [[f"line {n}"] for n in range(LOG_BURST_LINES)]
    assert written[LOG_BURST_LINES:] == [[]] * 5
    now[0] += 1 / LOG_LINES_PER_S
    note, line = budget.admit("later")
    assert note.startswith("toolwire: dropped 5 log lines of this server") and line == "later"
    assert budget.closing() == []


def test_a_long_line_is_cut_and_the_drops_are_told_at_the_close() -> None:
    budget = LogBudget(clock=lambda: 0.0)
    [cut] = budget.admit("x" * (MAX_LOG_LINE_CHARS + 10))
    assert cut == "x" * MAX_LOG_LINE_CHARS + " ... (10 more characters not logged)"
    while budget.admit("more"):
        pass
    assert budget.closing()[0].startswith("toolwire: dropped 1 log lines")
