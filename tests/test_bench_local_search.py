"""The local-model tool-search bench's parts, cheaply: every task's tool is one of the 52 the model is offered, a
search with the task's own words finds it among the first five, and without `.venv-llm` the bench is skipped with the
reason (bench/run.py writes it as a note) instead of failing."""

from datetime import UTC, datetime
from pathlib import Path

import pytest
from bench import local_search_bench
from bench.run import render
from bench.tool_catalog import catalog

from toolwire_shared.tool_index import ToolIndex
from toolwire_shared.tools import ToolSpec


def test_every_task_needs_one_offered_tool_a_search_in_its_words_finds() -> None:
    tools = catalog(local_search_bench.TOOLS)
    index = ToolIndex(
        ToolSpec(name=t["name"], description=t["description"], input_schema=t["inputSchema"]) for t in tools
    )
    assert len(local_search_bench.TASKS) == 20 and len({tool for _, tool in local_search_bench.TASKS}) == 20
    assert {tool for _, tool in local_search_bench.TASKS} <= {t["name"] for t in tools}
    missed = [tool for task, tool in local_search_bench.TASKS if tool not in [s.name for s in index.search(task, 5)]]
    assert missed == []


def test_without_the_llm_venv_the_bench_is_skipped_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_search_bench, "LLM_PYTHON", tmp_path / "no-venv" / "bin" / "python")
    data = local_search_bench.run()
    assert data["figures"] == [] and "no llama-cpp-python venv" in data["skipped"]
    section = {"module": "local_search_bench", "title": "local", "seconds": 0.0, "figures": [], "data": data}
    assert "- skipped: no llama-cpp-python venv" in render({}, datetime.now(UTC), [section], 0.0)
