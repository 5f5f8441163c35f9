"""The fleet bench's parts: its loopback model drives a real run to its answer and answers requests side by side,
and its /proc CPU reading counts a process's own and its reaped children's time."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import httpx2
from bench.loopback_model import serve
from bench.proc_cpu import cpu_s, machine_busy_s, tree_cpu_s

from helpers.polling import wait_until
from helpers.servers import SUPPORT_TOOLS, serve_argv
from toolwire_client.assembly.agents import build_agent
from toolwire_client.config import RunConfig, RunLimits, ServerSpec

REPO = Path(__file__).resolve().parents[1]


async def test_the_loopback_model_drives_a_run_on_the_support_tools_to_its_answer(tmp_path: Path) -> None:
    server = serve(0.01)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        support = ServerSpec(
            name="support",
            command=serve_argv(SUPPORT_TOOLS, "--stdio"),
            env={"TOOLWIRE_SUPPORT_DB": str(tmp_path / "support.sqlite3")},
            cwd=str(REPO),
        )
        config = RunConfig(
            model="openai:loopback",
            base_url=f"http://127.0.0.1:{server.server_address[1]}/v1",
            servers=[support],
            limits=RunLimits(max_steps=8),
        )
        state = await build_agent(config).run("What does order A123 cost with GST?")
    finally:
        server.shutdown()
        server.server_close()
    assert state.status == "done", state.report
    assert [c.name for s in state.steps for c in s.tool_calls] == ["get_order", "calculator"]
    assert state.final_answer == "Order A123 costs 5900.0 with GST."


async def test_the_loopback_model_sleeps_out_its_delay_beside_other_requests() -> None:
    server = serve(0.3)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1/chat/completions"
    body = {"model": "loopback", "messages": [{"role": "user", "content": "order A123?"}]}
    try:
        async with httpx2.AsyncClient(timeout=10) as http:
            answers: list[httpx2.Response] = []
            began = time.monotonic()
            async with anyio.create_task_group() as group:
                for _ in range(20):
                    group.start_soon(lambda: _post(http, url, body, answers))
            took = time.monotonic() - began
    finally:
        server.shutdown()
        server.server_close()
    assert [a.status_code for a in answers] == [200] * 20
    assert answers[0].json()["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "get_order"
    assert 0.3 <= took < 3.0  # one after another would be 6 s


async def _post(http: httpx2.AsyncClient, url: str, body: object, into: list[httpx2.Response]) -> None:
    into.append(await http.post(url, json=body))


def test_cpu_of_a_process_and_of_its_reaped_children() -> None:
    # The kernel charges CPU in clock ticks, sampled: a process that burned 0.5 s by its own clock may be charged a
    # few ticks less, so the reading is asked for 0.4 s (40 ticks of 10 ms of slack, far above sampling error).
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.5: pass"
    child = subprocess.Popen([sys.executable, "-c", burn + "\nimport sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        wait_until(lambda: cpu_s(child.pid) >= 0.4, "the child to burn 0.4 s of CPU", timeout_s=30, proc=child)
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=30)
    before_tree, before_machine = tree_cpu_s(os.getpid()), machine_busy_s()
    subprocess.run([sys.executable, "-c", burn], check=True, timeout=60)
    assert tree_cpu_s(os.getpid()) - before_tree >= 0.4  # the reaped child's time, in cutime + cstime
    assert machine_busy_s() - before_machine >= 0.4
