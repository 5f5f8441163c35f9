"""The support example's order table is seeded in one transaction: servers started side by side on a fresh file (the
console's tests start two) each see every order, never the part another had written so far (it happened: one run
was told order B200 did not exist and ended without its refund)."""

import threading
from pathlib import Path

import pytest
from examples import support_tools

OPENERS = 8
ROUNDS = 20  # before the fix, 30 rounds of 8 saw a part of the seed 6 times


def test_openers_side_by_side_on_a_fresh_file_each_see_every_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []
    for round_ in range(ROUNDS):
        monkeypatch.setenv(support_tools.DB_ENV, str(tmp_path / f"support-{round_}.sqlite3"))
        together = threading.Barrier(OPENERS)

        def open_and_count(together: threading.Barrier = together) -> None:
            together.wait()
            with support_tools._connect() as conn:
                seen.append(conn.execute("SELECT COUNT(*) FROM orders").fetchone()[0])

        openers = [threading.Thread(target=open_and_count) for _ in range(OPENERS)]
        for opener in openers:
            opener.start()
        for opener in openers:
            opener.join()
    assert seen == [len(support_tools._SEED)] * (OPENERS * ROUNDS)
