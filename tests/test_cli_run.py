"""`toolwire run` in its own process: the live step table, the saved run, and a provider base URL that survives
into `toolwire resume` (the model is an OpenAI-compatible server on 127.0.0.1 speaking the real wire format)."""

import json
import re
import subprocess
import sys
from pathlib import Path

from helpers.cli import REPO, clean_env, run_toolwire
from helpers.fake_providers import FakeProvider, RecordedRequest, Reply, openai_call, openai_completion
from toolwire_client.mistakes import WAITING

SUPPORT = f"{sys.executable} -m toolwire_server examples.support_tools:registry --stdio"


def run_on_support(task: str, db: str, env: dict[str, str], *model: str) -> "subprocess.CompletedProcess[str]":
    """`toolwire run TASK` with the given model options, on the support desk's tool server and the test's store."""
    return run_toolwire("run", task, *model, "--server", SUPPORT, "--db", db, env=env)


def support_env(tmp_path: Path) -> dict[str, str]:
    return clean_env(TOOLWIRE_SUPPORT_DB=str(tmp_path / "support.sqlite3"))


def test_run_prints_the_step_table_and_saves_the_run(tmp_path: Path) -> None:
    env, db = support_env(tmp_path), str(tmp_path / "runs.db")
    done = run_on_support("What does order A123 cost in total with 18% GST?", db, env, "--model", "scripted:recovers")
    assert done.returncode == 0, done.stdout + done.stderr
    assert 'step 1 | get_order({"id": "A123"}) | ERROR: bad arguments for get_order' in done.stdout
    assert "answer: Order A123 costs 5900.0 rupees with 18% GST." in done.stdout
    said = re.search(
        r"^run: (run_\w+) \(`toolwire trace show \1` shows it, `toolwire replay \1` replays it\)$", done.stdout, re.M
    )
    assert said is not None, done.stdout  # the id to look at the run again
    runs = run_toolwire("runs", "--db", db, env=env)
    assert " done " in runs.stdout and said.group(1) in runs.stdout, runs.stdout


def test_run_with_delegate_offers_the_delegate_tool_and_shows_the_sub_agent(tmp_path: Path) -> None:
    env, db = support_env(tmp_path), str(tmp_path / "runs.db")
    task = "What does order A123 cost in total with 18% GST?"
    args = ("run", task, "--model", "scripted:delegates", "--server", SUPPORT, "--db", db)
    done = run_toolwire(*args, "--delegate", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "answer: A sub-agent worked on it: Order A123 costs 5900.0 rupees with 18% GST." in done.stdout
    without = run_toolwire(*args, env=env)  # not turned on: no such tool
    assert "ERROR: unknown tool 'delegate'" in without.stdout, without.stdout
    listed = json.loads(run_toolwire("runs", "--db", db, "--json", env=env).stdout)
    assert sorted(r["parent_run_id"] is not None for r in listed) == [False, False, True]


def provider_turns(request: RecordedRequest) -> Reply:
    """An OpenAI-compatible model that asks for the refund, then answers from what the tool returned."""
    results = [m for m in request.body["messages"] if m["role"] == "tool"]
    if not results:
        return openai_completion(
            None, [openai_call("call_r1", "issue_refund", json.dumps({"order_id": "A123", "amount_cents": 2500}))]
        )
    return openai_completion(f"Done: {results[-1]['content']}")


def test_a_paused_run_on_a_local_provider_resumes_with_its_base_url(tmp_path: Path) -> None:
    env, db = support_env(tmp_path), str(tmp_path / "runs.db")
    with FakeProvider(provider_turns) as provider:
        paused = run_on_support(
            "Refund A123", db, env, "--model", "openai:local-model", "--base-url", provider.openai_url
        )
        assert paused.returncode == WAITING and "waiting for approval" in paused.stdout, paused.stdout + paused.stderr
        run_id = paused.stdout.split("toolwire approve ")[1].split()[0].strip("`")
        assert run_toolwire("approve", run_id, "--db", db, env=env).returncode == 0
        resumed = run_toolwire("resume", run_id, "--db", db, env=env)  # a new process rebuilds the model from the run
        assert resumed.returncode == 0 and "done" in resumed.stdout, resumed.stdout + resumed.stderr
        assert len(provider.requests) == 2 and provider.requests[1].path == "/v1/chat/completions"
    exported = json.loads(run_toolwire("trace", "export", run_id, "--json", "--db", db, env=env).stdout)
    assert exported["config"]["base_url"] == provider.openai_url
    assert exported["final_answer"].startswith("Done: ") and '"amount_cents": 2500' in exported["final_answer"]


def responses_turns(request: RecordedRequest) -> Reply:
    """A Responses API model, streamed: two parallel calculator calls, then an answer from the outputs (by call_id)."""
    from helpers.fake_providers import responses_call, responses_message, responses_reply, responses_stream

    outputs = {i["call_id"]: i["output"] for i in request.body["input"] if i.get("type") == "function_call_output"}
    if not outputs:
        calls = [
            responses_call("call_a", "calculator", json.dumps({"expression": "2500 * 2"})),
            responses_call("call_b", "calculator", json.dumps({"expression": "5000 * 1.18"})),
        ]
        return responses_stream(responses_reply(calls))
    return responses_stream(responses_reply([responses_message(f"Total {outputs['call_b']} rupees.")]))


def test_run_streams_a_responses_model_and_prints_its_text_live(tmp_path: Path) -> None:
    env, db = support_env(tmp_path), str(tmp_path / "runs.db")
    with FakeProvider(responses_turns) as provider:
        model = ("--model", "openai-responses:gpt-4.1-mini", "--base-url", provider.openai_url, "--stream")
        done = run_on_support("What is 2 x 2500 with 18% GST?", db, env, *model)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [r.path for r in provider.requests] == ["/v1/responses", "/v1/responses"]
    assert all(r.body["stream"] is True and r.body["store"] is False for r in provider.requests)
    echoed = provider.requests[1].body["input"]
    assert [i.get("call_id") for i in echoed[1:]] == ["call_a", "call_b", "call_a", "call_b"]  # calls, then outputs
    lines = done.stdout.splitlines()
    live = lines.index("  ... Total 5900.0 rupees.")  # the deltas, on their own line above the step row
    assert lines[live + 1].startswith("  step 2 | final: Total 5900.0 rupees.")
    assert 'step 1 | calculator({"expression": "2500 * 2"}) | 5000' in done.stdout
    assert "answer: Total 5900.0 rupees." in done.stdout


def test_run_plan_prints_the_plan_and_the_replan_and_the_run_replays(tmp_path: Path) -> None:
    env, db = support_env(tmp_path), str(tmp_path / "runs.db")
    task = "What does order A123 cost in total with 18% GST?"
    args = ["run", task, "--model", "scripted:replans", "--server", SUPPORT, "--db", db, "--plan", "--json"]
    done = run_toolwire(*args, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    table = done.stderr  # with --json the table goes to stderr
    assert "step 1 | plan: 1. Find order A123 among the customer's orders" in table
    assert "step 3 | step 1 of 3 failed: STEP FAILED: no orders for customer A123" in table
    assert "step 4 | plan: 1. Look up order A123" in table and "step 4 | plan: 3. Answer with the total" in table
    assert "answer: Order A123 costs 5900.0 INR with 18% GST." in table
    state = json.loads(done.stdout)
    assert state["plan"]["replans"] == 1 and [s["kind"] for s in state["steps"]].count("plan") == 2
    replayed = run_toolwire("replay", state["run_id"], "--db", db, env=env)
    assert replayed.returncode == 0 and "identical" in replayed.stdout, replayed.stdout + replayed.stderr

    misused = run_toolwire("run", task, "--server", SUPPORT, "--max-replans", "2", env=env)
    assert misused.returncode == 2 and "--max-replans applies to planned runs: add --plan" in misused.stderr


def test_a_server_command_runs_in_the_folder_it_was_typed_in_when_resumed_from_another(tmp_path: Path) -> None:
    """`--server 'python -m toolwire_server tools.py:registry'` names a file of the folder the run started in: the
    run saves that folder as the server's cwd, so `resume` from elsewhere starts the same server."""
    env, db = support_env(tmp_path), str(tmp_path / "runs.db")
    desk = tmp_path / "desk"
    desk.mkdir()
    (desk / "tools.py").write_text((REPO / "examples" / "support_tools.py").read_text())
    server = f"{sys.executable} -m toolwire_server tools.py:registry --stdio"
    with FakeProvider(provider_turns) as provider:
        model = ("--model", "openai:local-model", "--base-url", provider.openai_url)
        paused = run_toolwire("run", "Refund A123", *model, "--server", server, "--db", db, env=env, cwd=desk)
        assert paused.returncode == WAITING and "waiting for approval" in paused.stdout, paused.stdout + paused.stderr
        run_id = paused.stdout.split("toolwire approve ")[1].split()[0].strip("`")
        assert run_toolwire("approve", run_id, "--db", db, env=env).returncode == 0
        resumed = run_toolwire("resume", run_id, "--db", db, env=env, cwd=tmp_path)  # not the run's folder
        assert resumed.returncode == 0 and "done" in resumed.stdout, resumed.stdout + resumed.stderr
    exported = json.loads(run_toolwire("trace", "export", run_id, "--json", "--db", db, env=env).stdout)
    assert exported["config"]["servers"][0]["cwd"] == str(desk)


def test_tool_timeout_is_the_runs_limit(tmp_path: Path) -> None:
    env, db = support_env(tmp_path), str(tmp_path / "runs.db")
    model = ("--model", "scripted:recovers")
    done = run_on_support("What does order A123 cost?", db, env, *model, "--tool-timeout", "7.5")
    assert done.returncode == 0, done.stdout + done.stderr
    run_id = re.search(r"^run: (run_\w+)", done.stdout, re.M).group(1)  # type: ignore[union-attr]
    exported = json.loads(run_toolwire("trace", "export", run_id, "--json", "--db", db, env=env).stdout)
    assert exported["config"]["limits"]["tool_timeout_s"] == 7.5
