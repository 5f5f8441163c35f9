"""The next conformance suite (@modelcontextprotocol/conformance@0.2.0-alpha.12) against `toolwire serve --http`:
its `tasks-*` scenarios (SEP-2663), its `input-required-result-*` ones (SEP-2322), the custom routing headers
(SEP-2243) and the stateless server (SEP-2575) on examples/conformance_tasks.py.

Needs that package in $TOOLWIRE_NODE_NEXT_DIR (CI: ./node-next, see .ci/run) and Node 22 from $TOOLWIRE_NODE_DIR."""

import os
import subprocess
from pathlib import Path

import pytest

from helpers.servers import REPO, HttpServer

NODE_BIN = Path(os.environ.get("TOOLWIRE_NODE_DIR") or REPO / "node22") / "node_modules" / ".bin"
NEXT_BIN = Path(os.environ.get("TOOLWIRE_NODE_NEXT_DIR") or REPO / "node-next") / "node_modules" / ".bin"
SCENARIOS = (
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-dispatch-and-envelope",
    "tasks-required-task-error",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-mrtr-composition",
    "input-required-result-basic-elicitation",
    "input-required-result-multi-round",
    "input-required-result-tampered-state",
    "input-required-result-non-tool-request",
    "http-custom-header-server-validation",
    "server-stateless",
)
"""Every tasks-* scenario but tasks-status-notifications (it has no checks: notifications are optional), and the
input-required-result-* ones that exercise toolwire's own machinery (a tool's and a prompt's question ending the
request, the sealed requestState across rounds, a tampered state refused). The other input-required-result-*
scenarios check only what the fixtures build by hand; they pass too (docs/tasks-and-input.md), and are left out to
keep this test near 20 s on a busy 2-core machine. http-custom-header-server-validation checks the Mcp-Param-*
headers against a tool's arguments; server-stateless the 2026-07-28 envelope, -32021 and the listen stream."""


@pytest.mark.node
@pytest.mark.skipif(
    not (NODE_BIN / "node").exists() or not (NEXT_BIN / "conformance").exists(),
    reason=f"needs Node 22 in {NODE_BIN} and conformance 0.2.0-alpha.12 in {NEXT_BIN} (see .ci/run)",
)
def test_tasks_scenarios_pass(tmp_path: Path) -> None:
    env = {"TOOLWIRE_TASK_STORE": str(tmp_path / "tasks.sqlite")}
    with HttpServer("examples.conformance_tasks:registry", env=env) as server:
        url = f"http://localhost:{server.port}/mcp"
        node_env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path)}
        runs = {
            scenario: subprocess.Popen(
                [str(NEXT_BIN / "conformance"), "server", "--url", url, "--scenario", scenario],
                env=node_env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for scenario in SCENARIOS
        }
        outputs = {scenario: proc.communicate(timeout=120)[0] for scenario, proc in runs.items()}
    for scenario, output in outputs.items():
        totals = [line for line in output.splitlines() if line.startswith("Passed:")]
        assert runs[scenario].returncode == 0 and totals, f"{scenario}:\n{output[-3000:]}"
        assert " 0 failed, 0 warnings" in totals[-1], f"{scenario}:\n{output[-3000:]}"
        passed, _, total = totals[-1].split()[1].rstrip(",").partition("/")
        assert passed == total and int(total) > 0, f"{scenario}: {totals[-1]}"
