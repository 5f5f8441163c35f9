"""A separate agent process for the code-mode tests, with the test's scripted model (`scripted:coder`) registered.

`code_driver.py run DB RUN_ID TOOLS_DB GATE_DIR` runs $CODE_MODE_SCRIPT (a file) as one run_code call over the script
tools (stdio server); `code_driver.py cli ARGS...` runs the real `toolwire` CLI (resume, approve, ...) in this process.
"""

import os
import sys
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for helpers: started as a script

from toolwire_client.models.seed_scripts import SCRIPTS, last_results
from toolwire_shared.messages import AssistantMessage, Message, ToolCall

REPO = Path(__file__).resolve().parents[2]
TOOLS = "tests/code_mode/script_tools.py:registry"


def coder(messages: list[Message]) -> AssistantMessage:
    """Step 1: run_code with the script in $CODE_MODE_SCRIPT; step 2: the answer, quoting the script's result."""
    results = last_results(messages)
    if not results:
        code = Path(os.environ["CODE_MODE_SCRIPT"]).read_text()
        return AssistantMessage(tool_calls=[ToolCall(id="call_code", name="run_code", arguments={"code": code})])
    return AssistantMessage(text=f"the script said: {results[-1].content}")


SCRIPTS["coder"] = coder


async def run(db: str, run_id: str, tools_db: str, gate: str) -> None:
    from helpers.driving import run_and_say
    from toolwire_client.config import RunConfig, RunLimits, ServerSpec
    from toolwire_client.strategies.code_mode import CodeMode

    server = ServerSpec(
        name="script",
        command=[sys.executable, "-m", "toolwire_server", TOOLS, "--stdio"],
        env={"SCRIPT_TOOLS_DB": tools_db, "SCRIPT_GATE_DIR": gate},
        cwd=str(REPO),
    )
    config = RunConfig(
        model="scripted:coder", servers=[server], limits=RunLimits(max_steps=4), code_mode=CodeMode(only=True)
    )
    await run_and_say(db, config, "run the script", run_id)


if __name__ == "__main__":
    if sys.argv[1] == "run":
        db, run_id, tools_db, gate = sys.argv[2:6]
        anyio.run(run, db, run_id, tools_db, gate)
    else:
        from toolwire_client.cli import main

        main(sys.argv[2:], prog_name="toolwire")
