"""The official AG-UI client (`@ag-ui/client`'s HttpAgent, on Node 22) consuming a toolwire run served by `toolwire
agent serve --ag-ui`: it verifies the event order itself, ends the first run on the approval interrupt, and its
resume (approving) finishes the run; its messages are the run's, each once.

Needs Node 22 and @ag-ui/client 1.0 in $TOOLWIRE_NODE_DIR (CI: ./node22, see .ci/run)."""

import json
import os
import subprocess
from pathlib import Path

import pytest
from agui_procs import ANSWER, PARALLEL, REFUND, Model, agent_server

from helpers.cli import REPO
from helpers.fake_providers import FakeProvider

NODE_DIR = Path(os.environ.get("TOOLWIRE_NODE_DIR") or REPO / "node22")
NODE = NODE_DIR / "node_modules" / ".bin" / "node"
CLIENT = NODE_DIR / "node_modules" / "@ag-ui" / "client"


@pytest.mark.node
@pytest.mark.skipif(
    not NODE.exists() or not CLIENT.exists(),
    reason=f"needs Node 22 and @ag-ui/client in {NODE_DIR} (set TOOLWIRE_NODE_DIR; see .ci/run for the npm line)",
)
def test_the_official_client_runs_resumes_and_finishes(tmp_path: Path) -> None:
    with FakeProvider(responder=Model(gated=False)) as fake, agent_server(tmp_path, fake.anthropic_url) as url:
        script = Path(__file__).with_name("agui_client.js")
        done = subprocess.run(
            [str(NODE), str(script), url, "no-token-needed-on-loopback", "thread-node", "Refund A123"],
            env={**os.environ, "NODE_PATH": str(NODE_DIR / "node_modules")},
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
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
