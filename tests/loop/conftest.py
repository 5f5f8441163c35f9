"""Real tool servers for the loop tests: `python -m toolwire_server TARGET --stdio`, spawned by McpSource."""

import sys
from pathlib import Path

import pytest

from toolwire_client.tools.mcp_source import McpSource

REPO = Path(__file__).resolve().parents[2]
SUPPORT_TOOLS = "examples.support_tools:registry"
LOOP_TOOLS = "tests/loop/loop_tools.py:registry"
TASK = "What does order A123 cost in total with 18% GST?"


def stdio_source(target: str, name: str, env: dict[str, str] | None = None) -> McpSource:
    argv = [sys.executable, "-m", "toolwire_server", target, "--stdio", "--log-level", "ERROR"]
    return McpSource(name, command=argv, env=env or {}, cwd=str(REPO))


@pytest.fixture
def support_source(tmp_path: Path) -> McpSource:
    return stdio_source(SUPPORT_TOOLS, "support", {"TOOLWIRE_SUPPORT_DB": str(tmp_path / "support.sqlite3")})


@pytest.fixture
def loop_source() -> McpSource:
    return stdio_source(LOOP_TOOLS, "looptools")
