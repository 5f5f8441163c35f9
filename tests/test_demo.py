"""`toolwire demo` (what `make demo` runs) end to end in its own process: no API key, nothing started by hand."""

import json
from pathlib import Path

from helpers.cli import clean_env, run_toolwire


def test_demo_runs_pauses_for_approval_resumes_and_traces_both_processes(tmp_path: Path) -> None:
    trace, db = tmp_path / "trace.jsonl", tmp_path / "runs.db"
    env = clean_env()
    done = run_toolwire("demo", "--trace", str(trace), "--db", str(db), env=env, timeout_s=180)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert "model scripted:support_demo" in out
    assert "ERROR: bad arguments for search_orders" in out  # the bad call, repaired on the next step
    assert "waiting for approval: issue_refund" in out and "resuming the saved run" in out
    assert "-> done:" in out and "answer: Refunded one keyboard from order A123" in out

    spans = [json.loads(line) for line in trace.read_text().splitlines()]
    by_id = {s["span_id"]: s for s in spans}
    servers = [s for s in spans if s["kind"] == "SERVER" and s["name"].startswith("tools/call ")]
    assert {s["name"] for s in servers} >= {
        "tools/call get_order",
        "tools/call search_orders",
        "tools/call issue_refund",
    }
    for server in servers:  # server span -> MCP client span -> execute_tool of the same tool, one trace
        client = by_id[server["parent_span_id"]]
        tool = by_id[client["parent_span_id"]]
        assert tool["name"] == "execute_tool " + server["name"].removeprefix("tools/call ")
        assert server["trace_id"] == client["trace_id"] == tool["trace_id"]
        assert server["resource"]["service.name"] == "toolwire-server"
    agents = [s for s in spans if s["name"] == "invoke_agent support-agent"]
    assert len(agents) == 2  # the run, and its resumption linked to the first trace
    first, resumed = sorted(agents, key=lambda s: s["start_time_unix_nano"])
    assert resumed["links"] and resumed["links"][0]["trace_id"] == first["trace_id"]

    runs = run_toolwire("runs", "--db", str(db), env=env, timeout_s=60)
    assert runs.returncode == 0 and " done " in runs.stdout, runs.stdout
