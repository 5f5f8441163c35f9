"""A separate agent process for the durable-run tests, with the test's scripted model registered.

`driver.py run DB RUN_ID TOOLS_DB GATE_DIR [--risky NAME]` starts a run on the durable tools (stdio server);
`driver.py cli ARGS...` runs the real `toolwire` CLI (resume, approve, ...) in this process.
The model hangs (blocking, as a stuck provider would) at step $DURABLE_HANG_STEP until GATE_DIR/release exists.
"""

import os
import signal
import sys
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for helpers: started as a script

from helpers.driving import run_and_say
from toolwire_client import texts
from toolwire_client.models.seed_scripts import SCRIPTS, last_results
from toolwire_shared.messages import AssistantMessage, Message, SystemMessage, ToolCall

REPO = Path(__file__).resolve().parents[2]
TOOLS = "tests/store/durable_tools.py:registry"


def durable(messages: list[Message]) -> AssistantMessage:
    """Step 1: a note and a refund in parallel; step 2: the answer, quoting what came back."""
    step = 1 + sum(isinstance(m, AssistantMessage) for m in messages)
    gate = os.environ.get("DURABLE_GATE_DIR")
    if gate:  # one line per model call actually made, so a test can tell a replayed call from a new one
        with Path(gate, "model_calls").open("a") as calls:
            calls.write(f"{step}\n")
    if gate and os.environ.get("DURABLE_HANG_STEP") == str(step):
        Path(gate, "model_started").write_text(str(os.getpid()))
        while not Path(gate, "release").exists():
            time.sleep(0.02)
    results = last_results(messages)
    if not results:
        return AssistantMessage(
            tool_calls=[
                ToolCall(id="call_note", name="send_note", arguments={"text": "refund on its way"}),
                ToolCall(id="call_refund", name="refund", arguments={"order_id": "A123", "amount_cents": 500}),
            ]
        )
    return AssistantMessage(text=" / ".join(r.content for r in results))


def durable_delegates(messages: list[Message]) -> AssistantMessage:
    """A parent that hands the task to a sub-agent, which runs `durable` (so $DURABLE_HANG_STEP hangs the child)."""
    if isinstance(messages[0], SystemMessage) and messages[0].content == texts.DELEGATE_SYSTEM:
        return durable(messages)
    results = last_results(messages)
    if not results:
        task = "Refund 5 USD on order A123 and leave a note"
        return AssistantMessage(tool_calls=[ToolCall(id="call_delegate", name="delegate", arguments={"task": task})])
    return AssistantMessage(text=f"sub-agent: {results[-1].content}")


SCRIPTS["durable"] = durable
SCRIPTS["durable_delegates"] = durable_delegates


async def run(db: str, run_id: str, tools_db: str, gate: str, risky: list[str]) -> None:
    from toolwire_client.config import RunConfig, RunLimits, ServerSpec

    server = ServerSpec(
        name="durable",
        command=[sys.executable, "-m", "toolwire_server", TOOLS, "--stdio"],
        env={"DURABLE_TEST_DB": tools_db, "DURABLE_GATE_DIR": gate},
        cwd=str(REPO),
    )
    from toolwire_client.strategies.delegation import Delegation

    delegating = bool(os.environ.get("DURABLE_DELEGATE"))  # the run's work done by a sub-agent
    config = RunConfig(
        model="scripted:durable_delegates" if delegating else "scripted:durable",
        servers=[server],
        limits=RunLimits(max_steps=6),
        risky_tools=risky,
        delegate=Delegation() if delegating else None,
    )
    await run_and_say(db, config, "Refund 5 USD on order A123 and leave a note", run_id)


if __name__ == "__main__":
    if sys.argv[1] == "run":
        db, run_id, tools_db, gate, *rest = sys.argv[2:]
        anyio.run(run, db, run_id, tools_db, gate, rest[1:] if rest[:1] == ["--risky"] else [])
        if os.environ.get("DURABLE_STAY"):  # a process that lives on while the run waits, to be killed
            Path(gate, "stayed").write_text(str(os.getpid()))
            signal.pause()
    else:
        from toolwire_client.cli import main

        main(sys.argv[2:], prog_name="toolwire")
