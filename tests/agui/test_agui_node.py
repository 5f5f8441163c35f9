"""The official AG-UI client (`@ag-ui/client`'s HttpAgent, on Node 22) consuming a toolwire run served by `toolwire
agent serve --ag-ui`: it verifies the event order itself, ends the first run on the approval interrupt, and its
resume (approving) finishes the run; its messages are the run's, each once. With a sub-agent, the same with the
child's steps streamed as an AG-UI subagent and the child's approval as the interrupt.

Needs Node 22 and @ag-ui/client 1.0 in $TOOLWIRE_NODE_DIR (CI: ./node22, see .ci/run)."""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from agui_procs import ANSWER, PARALLEL, REFUND, Model, agent_server
from subagent_procs import ANSWER as DELEGATED_ANSWER
from subagent_procs import CHILD_ANSWER, DELEGATE, LOOKUPS, TASK, DelegatingModel
from subagent_procs import REFUND as CHILD_REFUND

from helpers.cli import REPO
from helpers.fake_providers import FakeProvider
from toolwire_client.tools.delegate import child_run_id

NODE_DIR = Path(os.environ.get("TOOLWIRE_NODE_DIR") or REPO / "node22")
NODE = NODE_DIR / "node_modules" / ".bin" / "node"
CLIENT = NODE_DIR / "node_modules" / "@ag-ui" / "client"


def run_client(url: str, thread: str, task: str) -> Any:
    """agui_client.js against `url`: the run to its interrupt, the resume approving it; what the client ended with."""
    script = Path(__file__).with_name("agui_client.js")
    done = subprocess.run(
        [str(NODE), str(script), url, "no-token-needed-on-loopback", thread, task],
        env={**os.environ, "NODE_PATH": str(NODE_DIR / "node_modules")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.node
@pytest.mark.skipif(
    not NODE.exists() or not CLIENT.exists(),
    reason=f"needs Node 22 and @ag-ui/client in {NODE_DIR} (set TOOLWIRE_NODE_DIR; see .ci/run for the npm line)",
)
def test_the_official_client_runs_resumes_and_finishes(tmp_path: Path) -> None:
    with FakeProvider(responder=Model(gated=False)) as fake, agent_server(tmp_path, fake.anthropic_url) as url:
        seen = run_client(url, "thread-node", "Refund A123")
    assert seen["interrupts"] == [
        {"id": "thread-node/toolu_refund", "reason": "approval", "toolCallId": "toolu_refund"}
    ]
    assert seen["events"].count("RUN_STARTED") == 2 and seen["events"].count("RUN_FINISHED") == 2
    assert seen["result"]["status"] == "done" and seen["result"]["answer"] == ANSWER
    messages = seen["messages"]
    ids = [m["id"] for m in messages]
    assert len(ids) == len(set(ids))
    calls = [c["id"] for m in messages if m["role"] == "assistant" for c in m.get("toolCalls", [])]
    assert calls == [i for i, _, _ in [*PARALLEL, REFUND]]
    results = [m["toolCallId"] for m in messages if m["role"] == "tool"]
    assert sorted(results) == sorted(calls)
    assert messages[-1]["role"] == "assistant" and messages[-1]["content"] == ANSWER
    assert seen["state"]["status"] == "done" and seen["state"]["waitingFor"] == []


@pytest.mark.node
@pytest.mark.skipif(
    not NODE.exists() or not CLIENT.exists(),
    reason=f"needs Node 22 and @ag-ui/client in {NODE_DIR} (set TOOLWIRE_NODE_DIR; see .ci/run for the npm line)",
)
def test_the_official_client_follows_a_sub_agent_to_its_interrupt_and_resumes_it(tmp_path: Path) -> None:
    """The parent delegates; the child's steps (parallel calls, then a refund waiting for approval) come as an AG-UI
    subagent, which the client's verifier accepts (a nested RUN_STARTED it would refuse); its resume reaches the
    child; each message once, the child's attributed to it."""
    model = DelegatingModel(gated=False)
    with FakeProvider(responder=model) as fake, agent_server(tmp_path, fake.anthropic_url, "--delegate") as url:
        seen = run_client(url, "thread-node-sub", TASK)
    child = child_run_id("thread-node-sub", DELEGATE[0])
    refund = f"{child}/{CHILD_REFUND[0]}"
    assert seen["interrupts"] == [{"id": refund, "reason": "approval", "toolCallId": refund, "subagentRunId": child}]
    events = seen["events"]
    assert events.count("RUN_STARTED") == 2 and events.count("RUN_FINISHED") == 2
    assert events.count("SUBAGENT_STARTED") == 2 and events.count("SUBAGENT_FINISHED") == 2  # one per leg
    assert seen["result"]["status"] == "done" and seen["result"]["answer"] == DELEGATED_ANSWER
    messages = seen["messages"]
    ids = [m["id"] for m in messages]
    assert len(ids) == len(set(ids))
    calls = {
        c["id"]: m.get("subagentRunId") for m in messages if m["role"] == "assistant" for c in m.get("toolCalls", [])
    }
    assert calls == {DELEGATE[0]: None, **{f"{child}/{i}": child for i, _, _ in [*LOOKUPS, CHILD_REFUND]}}
    results = {m["toolCallId"]: m.get("subagentRunId") for m in messages if m["role"] == "tool"}
    assert results == calls
    said = [(m.get("subagentRunId"), m["content"]) for m in messages if m["role"] == "assistant" and m["content"]]
    assert said[-2:] == [(child, CHILD_ANSWER), (None, DELEGATED_ANSWER)]
