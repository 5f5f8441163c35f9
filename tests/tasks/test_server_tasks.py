"""toolwire's server running tools as MCP tasks (SEP-2663) over Streamable HTTP: who may see a task, what survives a
restart, what a dead replica's task reads as, cancel under --isolate, and two replicas on one PostgreSQL."""

import signal
from pathlib import Path
from typing import Any

import pytest

from helpers.polling import wait_until
from helpers.postgres import fresh_database, postgres_url
from helpers.servers import HttpServer, tokens_file
from helpers.tasks_rpc import EXTENSION, result, rpc
from toolwire_shared.processes import process_alive

__all__ = ["postgres_url"]

TOOLS = "tests/tasks/task_tools.py:registry"


def start(url: str, tool: str, arguments: dict[str, Any], **options: Any) -> str:
    created = result(url, "tools/call", {"name": tool, "arguments": arguments}, **options)
    assert created["resultType"] == "task" and created["status"] == "working", created
    task_id: str = created["taskId"]
    return task_id


def settled(url: str, task_id: str, **options: Any) -> dict[str, Any]:
    """tasks/get until the task is terminal."""

    def terminal() -> dict[str, Any] | None:
        task = result(url, "tasks/get", {"taskId": task_id}, **options)
        return task if task["status"] in ("completed", "failed", "cancelled") else None

    return wait_until(terminal, f"task {task_id} to finish", timeout_s=30)


def test_an_agent_sees_and_cancels_only_its_own_tasks(tmp_path: Path) -> None:
    tokens = tokens_file(tmp_path, {"alice": ("tok-alice", ["*"]), "bob": ("tok-bob", ["*"])})
    env = {"TOOLWIRE_TASK_STORE": str(tmp_path / "tasks.sqlite")}
    with HttpServer(TOOLS, "--tokens", str(tokens), env=env) as server:
        task_id = start(server.url, "long_job", {"seconds": 30, "marker": str(tmp_path / "m")}, token="tok-alice")
        for method in ("tasks/get", "tasks/cancel"):
            answer = rpc(server.url, method, {"taskId": task_id}, token="tok-bob")
            assert answer["error"]["code"] == -32602 and "unknown task" in answer["error"]["message"], answer
        answer = rpc(server.url, "tasks/update", {"taskId": task_id, "inputResponses": {}}, token="tok-bob")
        assert answer["error"]["code"] == -32602
        # Without the extension declared, the tasks methods are refused (-32021), for the owner too.
        answer = rpc(server.url, "tasks/get", {"taskId": task_id}, token="tok-alice", declare=False)
        assert answer["error"]["code"] == -32021
        # The routing header must name the task (SEP-2663): a proxy and the server never disagree on it.
        assert result(server.url, "tasks/get", {"taskId": task_id}, token="tok-alice")["status"] == "working"
        result(server.url, "tasks/cancel", {"taskId": task_id}, token="tok-alice")
        assert settled(server.url, task_id, token="tok-alice")["status"] == "cancelled"
        # A task that completes at once is answered with its result (the SEP's immediate-result shortcut).
        quick = result(server.url, "tools/call", {"name": "quick_job", "arguments": {"name": "ada"}}, token="tok-bob")
        assert quick["resultType"] == "complete" and quick["content"][0]["text"] == "hello ada", quick
        # A required-task tool called without the extension: -32021, naming what to declare.
        call = {"name": "quick_job", "arguments": {"name": "x"}}
        answer = rpc(server.url, "tools/call", call, token="tok-bob", declare=False)
        assert answer["error"]["code"] == -32021
        assert answer["error"]["data"] == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
        # Advertised as SEP-2663 says: the extension in server/discover (no per-tool field in 2026-07-28).
        discovered = result(server.url, "server/discover", {}, token="tok-bob")
        assert discovered["capabilities"]["extensions"] == {EXTENSION: {}}


def test_a_result_survives_a_restart_and_a_dead_replicas_task_reads_failed(tmp_path: Path) -> None:
    env = {"TOOLWIRE_TASK_STORE": str(tmp_path / "tasks.sqlite")}
    with HttpServer(TOOLS, env=env) as first:
        quick = start(first.url, "long_job", {"seconds": 0.3, "marker": str(tmp_path / "quick")})
        done = settled(first.url, quick)
        assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "done after 0.3 s"
        marker = tmp_path / "long"
        long = start(first.url, "long_job", {"seconds": 60, "marker": str(marker)})
        wait_until(marker.exists, "the long job to start", timeout_s=15)
        assert first.proc is not None
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait(timeout=10)
    with HttpServer(TOOLS, env=env) as second:
        kept = result(second.url, "tasks/get", {"taskId": quick})
        assert kept["status"] == "completed" and kept["result"]["content"][0]["text"] == "done after 0.3 s"
        orphan = result(second.url, "tasks/get", {"taskId": long})
        assert orphan["status"] == "failed", orphan
        assert "stopped before it finished" in orphan["statusMessage"] and orphan["error"]["code"] == -32603


def test_cancel_under_isolate_kills_the_worker_process(tmp_path: Path) -> None:
    env = {"TOOLWIRE_TASK_STORE": str(tmp_path / "tasks.sqlite")}
    with HttpServer(TOOLS, "--isolate", env=env) as server:
        marker = tmp_path / "worker"
        task_id = start(server.url, "long_job", {"seconds": 60, "marker": str(marker)})
        wait_until(lambda: marker.exists() and marker.read_text(), "the job to start in a worker", timeout_s=20)
        worker = int(marker.read_text())
        assert server.proc is not None and worker != server.proc.pid
        working = result(server.url, "tasks/get", {"taskId": task_id})
        assert working["status"] == "working"
        wait_until(
            lambda: "working" in (result(server.url, "tasks/get", {"taskId": task_id}).get("statusMessage") or ""),
            "the job's progress to reach tasks/get",
            timeout_s=15,
        )
        result(server.url, "tasks/cancel", {"taskId": task_id})
        assert settled(server.url, task_id)["status"] == "cancelled"
        wait_until(lambda: not process_alive(worker), f"worker {worker} to be killed", timeout_s=15)


@pytest.mark.postgres
def test_another_replica_answers_and_cancels_on_postgres(tmp_path: Path, postgres_url: str) -> None:
    env = {"TOOLWIRE_TASK_STORE": fresh_database(postgres_url, "toolwire_tasks_replicas")}
    with HttpServer(TOOLS, env=env) as one, HttpServer(TOOLS, env=env) as two:
        quick = start(one.url, "long_job", {"seconds": 0.3, "marker": str(tmp_path / "quick")})
        done = settled(two.url, quick)
        assert done["result"]["content"][0]["text"] == "done after 0.3 s"
        marker = tmp_path / "long"
        long = start(one.url, "long_job", {"seconds": 60, "marker": str(marker)})
        wait_until(marker.exists, "the long job to start", timeout_s=15)
        assert result(two.url, "tasks/get", {"taskId": long})["status"] == "working"
        result(two.url, "tasks/cancel", {"taskId": long})  # reaches replica one at its next heartbeat
        assert settled(one.url, long)["status"] == "cancelled"
        assert (tmp_path / "long.runs").read_text() == "run\n"
