"""The README is true: its ten-line example, copied as printed into a fresh folder, runs with no API key and no
activated venv and prints what the README says; its command table holds every command and option there is; its
desktop-client snippets start and reach a real tool server."""

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import anyio
import click

from helpers.cli import TOOLWIRE
from helpers.servers import HttpServer, http_client
from toolwire_client.cli import main
from toolwire_client.cli.reference import BEGIN, END, commands, section
from toolwire_client.config import ServerSpec
from toolwire_client.tools.mcp_source import McpSource
from toolwire_server.auth.access import parse_access

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def blocks(heading: str, lang: str) -> list[str]:
    """The code blocks of one README section, as printed."""
    part = README.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{lang}\n(.*?)```", part, flags=re.S)


def test_the_ten_line_example_runs_as_printed_with_no_key_and_no_venv_on_path(tmp_path: Path) -> None:
    (tools, agent), [printed] = blocks("Ten lines", "python"), blocks("Ten lines", "text")
    (tmp_path / "tools.py").write_text(tools)
    (tmp_path / "agent.py").write_text(agent)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # no provider key, the venv not on PATH
    done = subprocess.run(
        [sys.executable, "agent.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == printed, done.stdout + done.stderr[-2000:]
    assert json.loads(done.stdout.removeprefix("done ")) == {  # the test model: get_order called with "a"
        "get_order": {"order_id": "a", "item": "keyboard", "unit_price": 2500, "qty": 2}
    }
    assert "no model named and no ANTHROPIC_API_KEY or OPENAI_API_KEY set: running the test model" in done.stderr


def test_the_command_table_is_current() -> None:
    start, end = README.index(BEGIN), README.index(END) + len(END)
    assert README[start:end] == section(main), "run: .venv/bin/python -m toolwire_client.cli.reference README.md"


def test_every_command_and_option_is_in_the_table() -> None:
    rows = README[README.index(BEGIN) : README.index(END)].splitlines()
    for path, command in commands(main):
        [row] = [r for r in rows if r.startswith((f"| `{path} ", f"| `{path}`"))]
        options = row.split(" | ")[1]
        listed = {name for span in re.findall(r"`([^`]*)`", options) for name in span.split(" ")[0].split("/")}
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:  # hidden: an old spelling, a test knob
                assert set(param.opts) <= listed, (path, param.opts, options)
    assert "`--version`" in next(r for r in rows if r.startswith("| `toolwire` |"))


def _desktop_snippets() -> tuple[dict[str, object], dict[str, object]]:
    stdio, http = (
        json.loads(b)["mcpServers"]["support"] for b in blocks("Use the tools from a desktop MCP client", "json")
    )
    return stdio, http


def test_the_stdio_snippet_starts_the_tool_server(tmp_path: Path) -> None:
    tools = tmp_path / "tools.py"
    tools.write_text(blocks("Ten lines", "python")[0])
    stdio, _ = _desktop_snippets()
    assert stdio["command"] == "/absolute/path/to/.venv/bin/toolwire"
    args = [str(a).replace("/absolute/path/to/tools.py", str(tools)) for a in stdio["args"]]  # type: ignore[attr-defined]
    elsewhere = tmp_path / "client"
    elsewhere.mkdir()

    async def listed() -> list[str]:
        source = McpSource("desktop", command=[TOOLWIRE, *args], cwd=str(elsewhere))
        await source.start()
        try:
            return [spec.name for spec in await source.list_tools()]
        finally:
            await source.aclose()

    assert anyio.run(listed) == ["get_order"]


def test_the_http_snippet_reaches_the_tool_server_with_its_token(tmp_path: Path) -> None:
    tools, tokens = tmp_path / "tools.py", tmp_path / "tokens.toml"
    tools.write_text(blocks("Ten lines", "python")[0])
    [access] = blocks("Use the tools from a desktop MCP client", "toml")
    tokens.write_text(access)
    _, http = _desktop_snippets()
    headers: dict[str, str] = http["headers"]  # type: ignore[assignment]
    assert http["type"] == "http" and headers["Authorization"].startswith("Bearer ")
    env = {**os.environ, "DESKTOP_TOKEN": "tok-desktop"}
    with HttpServer(f"{tools}:registry", "--tokens", str(tokens), env=env) as server:
        assert str(http["url"]).replace("8000", str(server.port)) == server.url

        async def listed() -> list[str]:
            async with http_client(server.url, token="tok-desktop") as client:
                return [tool.name for tool in (await client.list_tools()).tools]

        assert anyio.run(listed) == ["get_order"]


def test_the_oauth_snippets_are_a_valid_access_config_and_server_spec() -> None:
    snippet, servers = blocks("Remote clients with OAuth", "toml")
    access = parse_access(tomllib.loads(snippet), "README")
    assert access.oauth is not None and access.oauth.jwks_url == "https://auth.example.com/.well-known/jwks.json"
    assert access.grants == {} and access.subjects["desktop-client"].patterns == ("get_order",)
    [spec] = [ServerSpec.model_validate(entry) for entry in tomllib.loads(servers)["servers"]]
    assert spec.oauth is not None and spec.oauth.client_secret_env == "CLIENT_SECRET"
