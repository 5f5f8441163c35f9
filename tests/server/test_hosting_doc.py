"""docs/hosting.md's configuration for three agents and two upstreams is one that `toolwire check` accepts,
and it says what the page says it does (three agents, two upstreams), so the page cannot drift from the schema."""

import os
from pathlib import Path

from click.testing import CliRunner

from helpers.servers import REPO
from toolwire_client.cli import main


def _first_toml_block(page: Path, heading: str) -> str:
    text = page.read_text()
    start = text.index("```toml", text.index(heading)) + len("```toml")
    return text[start : text.index("```", start)]


def test_the_hosting_pages_configuration_passes_serve_check(tmp_path: Path) -> None:
    config = tmp_path / "hosting.toml"
    config.write_text(_first_toml_block(REPO / "docs" / "hosting.md", "## A hosting configuration"))
    bin_dir = tmp_path / "bin"  # `toolwire check` finds the upstream's command on PATH, and does not start it
    bin_dir.mkdir()
    (bin_dir / "mcp-server-time").write_text("#!/bin/sh\nexit 1\n")
    (bin_dir / "mcp-server-time").chmod(0o755)
    env = {
        "SUPPORT_TOKEN": "s",
        "REPORTING_TOKEN": "r",
        "SEARCH_TOKEN": "host-secret",
        "TOOLWIRE_DB": "postgresql://toolwire@127.0.0.1:1/toolwire",
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    }
    done = CliRunner().invoke(main, ["check", str(config)], env=env)
    assert done.exit_code == 0, done.output
    assert "3 agents" in done.output and "2 upstreams (not started)" in done.output, done.output
