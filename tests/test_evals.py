"""`toolwire eval` against the real stdio tool server: the seed set passes, failures gate CI and are saved."""

import json
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from helpers.cli import REPO, run_toolwire
from helpers.refusals import refusal
from toolwire_client.evals.checks import AnswerCheck, right_order, right_tools
from toolwire_client.evals.spec import EvalFileError, load_eval_file
from toolwire_client.store import open_store


@dataclass
class Done:
    exit_code: int
    output: str


def toolwire(*args: str) -> Done:
    """The real command in its own process, as CI runs it; what it said on stdout and stderr together."""
    done = run_toolwire(*args, timeout_s=90)
    return Done(done.returncode, done.stdout + done.stderr)


SEEDS = REPO / "examples" / "evals" / "seeds.toml"
SERVER = f'''[[servers]]
command = ["{{python}}", "-m", "toolwire_server", "{REPO}/examples/support_tools.py:registry", "--stdio"]
env = {{ TOOLWIRE_SUPPORT_DB = "{{attempt_dir}}/support.sqlite3" }}
'''
GST = "What does order A123 cost in total with 18% GST?"


def task(name: str, question: str, model: str, check: str, expect: str | None = None) -> str:
    """One [[tasks]] table of an eval file; `check` and `expect` are TOML inline tables."""
    lines = ["", "[[tasks]]", f'name = "{name}"', f'task = "{question}"', f'model = "{model}"', f"check = {check}"]
    if expect is not None:
        lines.append(f"expect = {expect}")
    return "\n".join(lines) + "\n"


def eval_file(tmp_path: Path, *tasks: str, head: str = "") -> Path:
    """An eval file of these tasks on the real support tool server (SERVER); `head`: top-level settings."""
    file = tmp_path / "evals.toml"
    file.write_text(head + SERVER + "".join(tasks))
    return file


def test_seed_set_passes_repeated_and_concurrent(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = toolwire(
        *[
            "eval",
            str(SEEDS),
            "--repeat",
            "2",
            "--concurrency",
            "6",
            "--json",
            str(out),
            "--min-success",
            "1.0",
            "--no-save",
        ]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert len(data["attempts"]) == 8
    assert data["total"]["success_rate"] == 1.0 and data["passed"] is True
    by_task = {t["name"]: t for t in data["tasks"]}
    assert set(by_task) == {"gst-total", "gst-total-exact", "refund-approved", "gst-total-delegated"}
    delegated = next(a for a in data["attempts"] if a["task"] == "gst-total-delegated")
    assert delegated["called"] == ["delegate"] and "5900" in delegated["answer"]  # the child's calls stay its own
    assert by_task["gst-total"]["right_tools"] == 1.0 and by_task["gst-total"]["right_order"] == 1.0
    gst = next(a for a in data["attempts"] if a["task"] == "gst-total")
    # the repaired bad call is in the path: get_order (bad), get_order (fixed), calculator
    assert gst["called"] == ["get_order", "get_order", "calculator"]
    assert "5900" in gst["answer"] and gst["tokens"] > 0 and gst["cost_usd"] is None  # scripted: no price
    refund = next(a for a in data["attempts"] if a["task"] == "refund-approved")
    assert refund["called"][:2] == ["get_order", "search_orders"] and refund["called"][-1] == "issue_refund"
    assert "gst-total" in result.output and "total" in result.output


def test_failures_fail_the_gate_and_are_saved_for_replay(tmp_path: Path) -> None:
    evals = eval_file(
        tmp_path,
        task("stuck", "What does order A123 cost?", "scripted:repeats", '{ contains = "costs" }'),
        task(
            "wrong-path",
            GST,
            "scripted:recovers",
            '{ contains = "5900" }',
            expect='{ tools = ["calculator", "get_order"], max_steps = 2 }',
        ),
        task("fine", GST, "scripted:recovers", '{ exact = "Order A123 costs 5900.0 rupees with 18% GST." }'),
        head="max_steps = 6\n",
    )
    db = tmp_path / "runs.sqlite3"
    out = tmp_path / "report.json"
    result = toolwire(
        *["eval", str(evals), "--report", str(out), "--min-success", "0.9", "--db", str(db), "--concurrency", "3"]
    )
    assert result.exit_code == 1, result.output
    assert out.exists(), result.output
    data = json.loads(out.read_text())
    assert data["total"]["successes"] == 1 and data["passed"] is False
    attempts = {a["task"]: a for a in data["attempts"]}
    assert attempts["stuck"]["stop_reason"] == "repeated_call"
    assert attempts["wrong-path"]["answer_ok"] is True
    assert attempts["wrong-path"]["right_order"] is False and attempts["wrong-path"]["within_steps"] is False
    assert attempts["fine"]["saved"] is False
    assert "toolwire replay" in result.output

    async def load_saved() -> None:
        store = await open_store(str(db))
        try:
            for name in ("stuck", "wrong-path"):
                assert attempts[name]["saved"] is True
                state = await store.load(attempts[name]["run_id"])
                assert state.steps and state.run_id == attempts[name]["run_id"]
                assert state.config["eval_task"] == name
                assert all(step.model_reply is not None for step in state.steps)  # what replay feeds back
        finally:
            await store.aclose()

    anyio.run(load_saved)
    # the saved failure reproduces offline, step for step
    replayed = toolwire("replay", attempts["stuck"]["run_id"], "--db", str(db))
    assert replayed.exit_code == 0 and "identical" in replayed.output, replayed.output


STRATEGIES = REPO / "examples" / "evals" / "strategies.toml"


def test_strategy_tasks_pass_with_their_path_metrics(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = toolwire(*["eval", str(STRATEGIES), "--report", str(out), "--min-success", "1.0", "--no-save"])
    assert result.exit_code == 0, result.output
    attempts = {a["task"]: a for a in json.loads(out.read_text())["attempts"]}
    assert set(attempts) == {
        "gst-total-reviewed",
        "gst-total-planned",
        "gst-total-replanned",
        "damaged-ticket-workflow",
    }
    assert attempts["gst-total-reviewed"]["reviews"] == 1 and attempts["gst-total-reviewed"]["within_reviews"] is True
    assert (attempts["gst-total-planned"]["replans"], attempts["gst-total-replanned"]["replans"]) == (0, 1)
    assert attempts["gst-total-replanned"]["called"] == ["search_orders", "get_order", "calculator"]
    assert attempts["damaged-ticket-workflow"]["called"] == ["get_policy", "get_order"]


def test_a_replan_or_a_review_over_its_ceiling_fails_the_task(tmp_path: Path) -> None:
    evals = eval_file(
        tmp_path,
        task("replanned", GST, "scripted:replans", '{ contains = "5900" }', expect="{ max_replans = 0 }")
        + "plan = { max_replans = 1 }\n",
        task("reviewed", GST, "scripted:reviews", '{ contains = "INR" }', expect="{ max_reviews = 0 }")
        + 'review = { criteria = ["Give the currency as INR."] }\n',
    )
    out = tmp_path / "report.json"
    result = toolwire(*["eval", str(evals), "--report", str(out), "--min-success", "0.5", "--no-save"])
    assert result.exit_code == 1, result.output
    attempts = {a["task"]: a for a in json.loads(out.read_text())["attempts"]}
    assert attempts["replanned"]["answer_ok"] is True and attempts["replanned"]["within_replans"] is False
    assert attempts["reviewed"]["answer_ok"] is True and attempts["reviewed"]["within_reviews"] is False
    assert "too many replans" in result.output and "too many reviews" in result.output


def test_cost_column_uses_price_override_and_cost_ceiling(tmp_path: Path) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."recovers"]\ninput = 3.0\noutput = 15.0\n')
    evals = tmp_path / "evals.json"
    evals.write_text(
        json.dumps(
            {
                "servers": [
                    {
                        "command": [
                            "{python}",
                            "-m",
                            "toolwire_server",
                            f"{REPO}/examples/support_tools.py:registry",
                            "--stdio",
                        ],
                        "env": {"TOOLWIRE_SUPPORT_DB": "{attempt_dir}/s.sqlite3"},
                    }
                ],
                "tasks": [
                    {
                        "name": "cheap",
                        "task": "What does order A123 cost in total with 18% GST?",
                        "model": "scripted:recovers",
                        "check": {"contains": "5900"},
                        "expect": {"max_cost_usd": 1.0},
                    },
                    {
                        "name": "too-dear",
                        "task": "What does order A123 cost in total with 18% GST?",
                        "model": "scripted:recovers",
                        "check": {"contains": "5900"},
                        "expect": {"max_cost_usd": 0.000001},
                    },
                ],
            }
        )
    )
    out = tmp_path / "r.json"
    result = toolwire(*["eval", str(evals), "--prices", str(prices), "--report", str(out), "--no-save"])
    assert result.exit_code == 0, result.output  # no --min-success: no gate
    attempts = {a["task"]: a for a in json.loads(out.read_text())["attempts"]}
    cheap = attempts["cheap"]
    assert cheap["success"] is True
    assert cheap["cost_usd"] == pytest.approx((cheap["input_tokens"] * 3 + cheap["output_tokens"] * 15) / 1e6)
    # the cost budget stops the run before it overspends, and the task fails
    assert attempts["too-dear"]["success"] is False and attempts["too-dear"]["stop_reason"] == "cost_budget"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('[[tasks]]\nname = "a"\ntask = "t"\nmodel = "scripted:recovers"\n', "tasks.0.check: Field required"),
        ('[[tasks]]\nname = "a"\ntask = "t"\nmodel = "m"\ncheck = { exact = "x", regex = "y" }\n', "exactly one of"),
        ('[[tasks]]\nname = "a"\ntask = "t"\ncheck = { exact = "x" }\n', "name no model"),
        ('[[tasks]]\nname = "a"\ntask = "t"\nmodel = "m"\ncheck = { callable = "nope" }\n', "module:function"),
        ('[[servers]]\nurl = "http://x"\ncommand = ["y"]\n', "exactly one of command"),
        ("tasks = [", "not valid TOML"),
        (
            '[[tasks]]\nname = "a"\ntask = "t"\nmodel = "m"\ncheck = { exact = "x" }\nplan = {}\n'
            '[[tasks.workflow.steps]]\nname = "s"\ninstruction = "i"\n',
            "sets both plan and workflow",
        ),
        (
            '[[tasks]]\nname = "a"\ntask = "t"\nmodel = "m"\ncheck = { exact = "x" }\n'
            '[[tasks.workflow.steps]]\nname = "s"\ninstruction = "use {t}"\n',
            "uses {t}, which is not an earlier step",
        ),
        (
            '[[tasks]]\nname = "a"\ntask = "t"\nmodel = "m"\ncheck = { exact = "x" }\nplan = { replans = 2 }\n',
            "replans",
        ),
    ],
)
def test_bad_eval_file_says_what_is_wrong(tmp_path: Path, text: str, says: str) -> None:
    file, message = refusal(tmp_path, text, load_eval_file, EvalFileError)
    assert says in message and "[[tasks]]" in message
    if "TOML" not in says:
        return
    result = toolwire(*["eval", str(file)])
    assert result.exit_code == 2 and says in result.output  # 2: bad input, distinct from 1: below the gate


def test_waterfall_of_a_saved_failed_run(tmp_path: Path) -> None:
    """A real run with two parallel calls (one bad), paused for approval, drawn from the store by the CLI."""
    refund = "The keyboard in order A123 arrived broken. Please refund one keyboard."
    evals = eval_file(
        tmp_path, task("refund-not-approved", refund, "scripted:support_demo", '{ contains = "Refunded" }')
    )
    db, out = tmp_path / "runs.sqlite3", tmp_path / "r.json"
    assert toolwire("eval", str(evals), "--db", str(db), "--report", str(out)).exit_code == 0
    attempt = json.loads(out.read_text())["attempts"][0]
    assert attempt["status"] == "waiting_for_approval" and attempt["saved"] is True
    shown = toolwire("trace", "show", attempt["run_id"], "--waterfall", "--db", str(db))
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    get_line = next(line for line in lines if "1 ├ get_order" in line)
    search_line = next(line for line in lines if "1 └ search_orders" in line)
    assert "✗ bad_arguments" in search_line

    # sent together: the two bars overlap on the time axis
    def cells(line: str) -> set[int]:
        return {i for i, ch in enumerate(line) if ch in "▆▒"}

    assert cells(get_line) & cells(search_line)
    assert "↻ retry after error" in next(line for line in lines if "2 └ search_orders" in line)
    assert "⏸ pending approval" in next(line for line in lines if "issue_refund" in line)


def test_path_and_answer_checks() -> None:
    assert right_order(["get_order", "calculator"], ["get_order", "get_order", "calculator"])
    assert not right_order(["calculator", "get_order"], ["get_order", "calculator"])
    assert right_tools(["get_order", "calculator"], ["get_order", "get_order", "calculator"])
    assert not right_tools(["get_order"], ["get_order", "issue_refund"])
    from toolwire_client.run.state import RunState

    state = RunState(run_id="r", agent_name="a", task="t", model="m")
    assert AnswerCheck(contains="GST", ignore_case=True).passes("with 18% gst", state)
    assert not AnswerCheck(exact="5900").passes(None, state)
    assert AnswerCheck(regex=r"\b5900(\.0)?\b").passes("costs 5900.0", state)
