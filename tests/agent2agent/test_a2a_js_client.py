"""@a2a-js/sdk's client (1.3, on Node 22) against `agent serve --a2a`: send, get, stream, an approval answered on
the input-required task, and cancel, as the Python client does in test_a2a_server.py.

Needs Node 22 in $TOOLWIRE_NODE_DIR and @a2a-js/sdk in $TOOLWIRE_NODE_A2A_DIR (CI: ./node22 and ./node-a2a, see
.ci/run)."""

import json
import os
import subprocess
from pathlib import Path

import anyio
import pytest

from agent2agent.a2a_serve import ALICE, A2AServer
from helpers.cli import REPO

NODE_BIN = Path(os.environ.get("TOOLWIRE_NODE_DIR") or REPO / "node22") / "node_modules" / ".bin"
A2A_JS = Path(os.environ.get("TOOLWIRE_NODE_A2A_DIR") or REPO / "node-a2a")
SCRIPT = Path(__file__).with_name("js_client.mjs")


@pytest.mark.node
@pytest.mark.skipif(
    not (NODE_BIN / "node").exists() or not (A2A_JS / "node_modules" / "@a2a-js" / "sdk").exists(),
    reason=f"needs Node 22 in {NODE_BIN} and @a2a-js/sdk 1.3 in {A2A_JS} (see .ci/run)",
)
async def test_the_js_sdk_client_sends_streams_gets_approves_and_cancels(served: A2AServer, tmp_path: Path) -> None:
    notes, hold = tmp_path / "notes", tmp_path / "hold"
    argv = [str(NODE_BIN / "node"), str(SCRIPT), served.url, ALICE, str(notes), str(hold)]
    done = await anyio.to_thread.run_sync(
        lambda: subprocess.run(
            argv, env={**os.environ, "A2A_JS_DIR": str(A2A_JS)}, capture_output=True, text=True, timeout=120
        )
    )
    assert done.returncode == 0, done.stdout + done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["send"] == ["TASK_STATE_COMPLETED", "done: JS"]
    assert seen["get"] == "TASK_STATE_COMPLETED"
    assert seen["stream"][0] == "task" and seen["stream"][-1] == "statusUpdate:TASK_STATE_COMPLETED"
    assert "artifactUpdate" in seen["stream"]
    assert seen["asks"] == "TASK_STATE_INPUT_REQUIRED"
    assert seen["approved"] == ["TASK_STATE_COMPLETED", "done: noted from js"]
    assert notes.read_text() == "from js\n"
    assert seen["cancel"] == "TASK_STATE_CANCELED"
