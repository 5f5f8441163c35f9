"""A long tool's progress, shown live: audit_orders on the real support desk server reports after each order
(MCP notifications/progress); McpSource passes a progress callback over stdio and Streamable HTTP (RegistrySource
in-process), the ToolBox hands each report to its on_progress with the call it belongs to, and `toolwire run`
prints `tool audit_orders: 1/3 checked A125` while the call runs, above the step row it ends in."""

import shlex
import sys
from pathlib import Path

import pytest
from examples.support_tools import desk

from helpers.cli import REPO, clean_env, run_toolwire
from helpers.servers import HttpServer
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.registry_source import RegistrySource
from toolwire_client.tools.source import RunContext, ToolSource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import ToolCall

from .conftest import stdio_source

DESK = "examples.support_tools:desk"
AUDIT = ToolCall(id="call_1", name="audit_orders", arguments={"customer_id": "cus_8123"})
REPORTS = [(1.0, 3.0, "checked A125"), (2.0, 3.0, "checked A124"), (3.0, 3.0, "checked A123")]
"""cus_8123's three orders, newest first, one report after each check."""


def desk_env(tmp_path: Path) -> dict[str, str]:
    return {"TOOLWIRE_SUPPORT_DB": str(tmp_path / "support.sqlite3"), "TOOLWIRE_SUPPORT_AUDIT_DELAY_S": "0"}


async def audit_with_progress(source: ToolSource) -> list[tuple[str, float, float | None, str | None]]:
    """Call audit_orders through a ToolBox that listens for progress; the reports it got, and the result checked."""
    seen: list[tuple[str, float, float | None, str | None]] = []
    box = ToolBox([source], on_progress=lambda call, p, total, message: seen.append((call.id, p, total, message)))
    async with box:
        result = await box.call(AUDIT, RunContext("run-progress"))
    assert not result.is_error, result.content
    assert [f["order_id"] for f in result.structured["result"]] == ["A125", "A124", "A123"]  # type: ignore[index]
    return seen


async def test_progress_over_stdio(tmp_path: Path) -> None:
    seen = await audit_with_progress(stdio_source(DESK, "desk", desk_env(tmp_path)))
    assert seen == [("call_1", *report) for report in REPORTS]


async def test_progress_from_a_worker_process(tmp_path: Path) -> None:
    """`toolwire serve --isolate`: the tool runs in a worker process, which relays its reports to the client."""
    argv = [sys.executable, "-m", "toolwire_server", DESK, "--stdio", "--isolate", "--log-level", "ERROR"]
    seen = await audit_with_progress(McpSource("desk", command=argv, env=desk_env(tmp_path), cwd=str(REPO)))
    assert seen == [("call_1", *report) for report in REPORTS]


async def test_progress_over_http(tmp_path: Path) -> None:
    with HttpServer(DESK, "--log-level", "ERROR", env=desk_env(tmp_path)) as server:
        seen = await audit_with_progress(McpSource("desk", url=server.url))
    assert seen == [("call_1", *report) for report in REPORTS]


async def test_progress_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in desk_env(tmp_path).items():
        monkeypatch.setenv(key, value)
    seen = await audit_with_progress(RegistrySource(desk))
    assert seen == [("call_1", *report) for report in REPORTS]


async def test_no_listener_no_progress_asked(tmp_path: Path) -> None:
    """Without on_progress the call asks for no progress (no token) and the tool's reports are no-ops."""
    async with ToolBox([stdio_source(DESK, "desk", desk_env(tmp_path))]) as box:
        result = await box.call(AUDIT, RunContext("run-quiet"))
    assert not result.is_error and "A123" in result.content


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_run_shows_progress_live(tmp_path: Path, transport: str) -> None:
    """`toolwire run` prints each report as a line while the call runs: all three before the call's step row."""
    env = clean_env(**desk_env(tmp_path))
    if transport == "stdio":
        argv = [sys.executable, "-m", "toolwire_server", DESK, "--stdio", "--log-level", "ERROR"]
        servers = ["--server", shlex.join(argv)]
        done = run_toolwire(
            "run", "Audit every order of cus_8123.", "--model", "scripted:audits", *servers,
            "--db", str(tmp_path / "runs.sqlite3"), env=env,
        )  # fmt: skip
    else:
        with HttpServer(DESK, "--log-level", "ERROR", env=env) as server:
            done = run_toolwire(
                "run", "Audit every order of cus_8123.", "--model", "scripted:audits", "--server-url", server.url,
                "--db", str(tmp_path / "runs.sqlite3"), env=env,
            )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    lines = done.stdout.splitlines()
    shown = [line.strip() for line in lines if line.strip().startswith("... tool audit_orders")]
    assert shown == [
        "... tool audit_orders: 1/3 checked A125",
        "... tool audit_orders: 2/3 checked A124",
        "... tool audit_orders: 3/3 checked A123",
    ]
    step_row = next(i for i, line in enumerate(lines) if line.strip().startswith("step 1 | audit_orders"))
    assert all(lines.index(f"  {line}") < step_row for line in shown)
    assert "A123 (delivered): may be returned within 30 days" in done.stdout
