"""Other MCP servers behind toolwire (`[upstreams.NAME]`): mcp-server-time and a small server of our own
(upstream_tools.py) mounted behind a real `toolwire serve`, reached by the official SDK client over HTTP in both
protocol eras and by toolwire's own agent over stdio; two agents with different grants; the upstream killed -9
answers readably, then is back; its list_changed reaches the agents; the audit has the calls; the agent's token never
reaches an HTTP upstream; `toolwire check` with a bad entry is one line."""

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from click.testing import CliRunner
from mcp.shared.subscriptions import ToolsListChanged

from external.servers import needs, py_server, run_calls
from helpers.cli import clean_env, run_toolwire
from helpers.otlp_sink import OtlpSink
from helpers.polling import await_until
from helpers.servers import REPO, HttpServer, http_client, text_of, tokens_file
from toolwire_client.cli import main
from toolwire_server.policy.audit import read_records
from toolwire_shared.results import ERROR_KIND_META, RETRY_AFTER_META

TIME = py_server("mcp-server-time")
OWN = [sys.executable, "-m", "toolwire_server", f"{REPO}/tests/server/upstream_tools.py:registry"]
TOOLS = f"{REPO}/tests/server/policy_tools.py:registry"


def _config(folder: Path, upstreams: str, *, time: bool = True) -> Path:
    """Agent ops may use echo and every upstream tool; plain echo and own__pid only, once a day."""
    path = folder / "server.toml"
    grant = '"echo", "time__*", "own__*"' if time else '"echo", "own__*"'
    path.write_text(
        f"""
tools = "{TOOLS}"

[agents.ops]
token = "tok-ops"
tools = [{grant}]

[agents.plain]
token = "tok-plain"
tools = ["echo", "own__pid"]

[[limits]]
agent = "plain"
tool = "own__*"
per_day = 1

[audit]
sqlite = "audit.db"
flush_s = 0.05
{upstreams}
"""
    )
    return path


def _stdio_upstream(name: str, argv: list[str], env: str = "{}") -> str:
    args = ", ".join(f'"{a}"' for a in [*argv[1:], "--stdio"] if a) if argv[0] == sys.executable else ""
    args = args or ", ".join(f'"{a}"' for a in [*argv[1:], "--local-timezone", "UTC"])
    return f'\n[upstreams.{name}]\ncommand = "{argv[0]}"\nargs = [{args}]\nenv = {env}\n'


UPSTREAMS = _stdio_upstream("time", TIME) + _stdio_upstream("own", OWN, '{ GIVEN = "yes" }\nenv_from = ["PASSED_ON"]')


def _kind(result: types.CallToolResult) -> str:
    return str((result.meta or {}).get(ERROR_KIND_META, "ok")) if result.is_error else "ok"


_UPSTREAM_SPAN = "MCP send tools/call get_current_time"


@pytest.fixture
def sink() -> Iterator[OtlpSink]:
    with OtlpSink() as running:
        yield running


@needs(TIME)
async def test_two_agents_both_eras_a_kill_a_list_change_and_the_audit(tmp_path: Path, sink: OtlpSink) -> None:
    config = _config(tmp_path, UPSTREAMS)
    heard: list[Any] = []

    async def note(message: Any) -> None:
        heard.append(message)

    env = clean_env(
        HOST_SECRET="never-for-upstreams",
        PASSED_ON="named",
        OTEL_EXPORTER_OTLP_ENDPOINT=sink.endpoint,
        OTEL_BSP_SCHEDULE_DELAY="50",
    )
    with HttpServer(f"--config={config}", env=env) as server:
        async with http_client(server.url, token="tok-ops") as ops:  # 2026-07-28 era
            names = {t.name for t in (await ops.list_tools()).tools}
            assert {"echo", "time__get_current_time", "time__convert_time", "own__pid", "own__grow"} <= names
            now = await ops.call_tool("time__get_current_time", {"timezone": "UTC"})
            assert _kind(now) == "ok" and '"timezone": "UTC"' in text_of(now)

            # The server's execute_tool span, and under it the SDK client's span of the call to the upstream.
            def served_of(got: list[dict[str, Any]]) -> list[dict[str, Any]]:
                return [x for x in got if x["name"] == "tools/call time__get_current_time" and x["kind"] == "SERVER"]

            # Both, since the server's span ends after its child's and may come in a later batch.
            spans = sink.wait_for(lambda got: any(x["name"] == _UPSTREAM_SPAN for x in got) and bool(served_of(got)))
            served = served_of(spans)
            assert served and served[0]["attributes"]["gen_ai.operation.name"] == "execute_tool"
            sent = next(x for x in spans if x["name"] == _UPSTREAM_SPAN)
            assert sent["kind"] == "CLIENT" and sent["parent_span_id"] == served[0]["span_id"]
            bad = await ops.call_tool("time__get_current_time", {"timezone": "Mars/Olympus"})
            assert bad.is_error and "Mars/Olympus" in text_of(bad)  # the upstream's own error, passed on
            # The upstream got only the variables its entry names, beside the SDK's basics (PATH, HOME, ...).
            seen = set((await ops.call_tool("own__env_names", {})).structured_content["result"])  # type: ignore[index]
            assert {"GIVEN", "PASSED_ON", "PATH"} <= seen and "HOST_SECRET" not in seen and "VIRTUAL_ENV" not in seen
            assert "OTEL_EXPORTER_OTLP_ENDPOINT" not in seen

            first = int(text_of(await ops.call_tool("own__pid", {})))
            os.kill(first, signal.SIGKILL)
            answers = [await ops.call_tool("own__pid", {})]  # no sleep: the very next call, whatever it meets
            while _kind(answers[-1]) == "ok" and int(text_of(answers[-1])) == first:
                answers.append(await ops.call_tool("own__pid", {}))  # the kill not yet noticed: the old pid's answer
            down = answers[-1]
            assert _kind(down) in ("limited", "outcome_unknown"), text_of(down)
            assert "upstream own is restarting; try again in " in text_of(down)
            if _kind(down) == "limited":
                assert (down.meta or {})[RETRY_AFTER_META] >= 1

            async def back() -> int:
                answer = await ops.call_tool("own__pid", {})
                return 0 if answer.is_error else int(text_of(answer))

            second = await await_until(back, "the upstream to be restarted", timeout_s=20, interval_s=0.2)
            assert second != first

            async with ops.listen(tools_list_changed=True) as events:  # 2026-07-28: list_changed on a listen stream
                assert text_of(await ops.call_tool("own__grow", {"name": "sprout"})) == "grew"
                with anyio.fail_after(15):
                    assert isinstance(await anext(events), ToolsListChanged)
            assert text_of(await ops.call_tool("own__sprout", {})) == "sprout grown here"

        async with http_client(server.url, token="tok-plain", mode="legacy") as plain:  # the handshake era
            names = {t.name for t in (await plain.list_tools()).tools}
            assert names == {"echo", "own__pid"}  # no time__*
            refused = await plain.call_tool("time__get_current_time", {"timezone": "UTC"})
            assert _kind(refused) == "refused"
            assert _kind(await plain.call_tool("own__pid", {})) == "ok"
            over = await plain.call_tool("own__pid", {})  # its quota of upstream calls: 1 a day
            assert _kind(over) == "limited" and "1 call per day for agent plain" in text_of(over)
            assert (await plain.list_prompts()).prompts == []  # own__greet is outside its grant

        async with http_client(server.url, token="tok-ops", mode="legacy") as ops:
            ops._session._message_handler = note  # type: ignore[union-attr]  # the standalone channel's messages
            assert "own__grown" not in {t.name for t in (await ops.list_tools()).tools}
            assert text_of(await ops.call_tool("own__grow", {"name": "grown"})) == "grew"
            await await_until(
                lambda: any(isinstance(m, types.ToolListChangedNotification) for m in heard),
                "tools/list_changed from the upstream to reach the agent",
                timeout_s=15,
            )
            names = {t.name for t in (await ops.list_tools()).tools}
            assert "own__grown" in names
            assert text_of(await ops.call_tool("own__grown", {})) == "grown grown here"
            assert [p.name for p in (await ops.list_prompts()).prompts] == ["own__greet"]
            greeting = await ops.get_prompt("own__greet", {"name": "Ada"})
            assert [m.content.text for m in greeting.messages] == ["Say hello to Ada."]  # type: ignore[union-attr]
    records = read_records(str(tmp_path / "audit.db"))
    by = {(r["agent"], r["tool"], r["outcome"]) for r in records}
    assert ("ops", "time__get_current_time", "ok") in by
    assert ("plain", "time__get_current_time", "refused") in by
    assert ("ops", "own__grown", "ok") in by
    assert any(r["tool"] == "own__pid" and r["outcome"] in ("limited", "outcome_unknown") for r in records)


@needs(TIME)
def test_toolwire_agent_over_stdio_sees_only_its_grant(tmp_path: Path) -> None:
    # toolwire's client starts a stdio server with a narrowed environment too: no PASSED_ON to pass on there
    config = _config(tmp_path, UPSTREAMS.replace('env_from = ["PASSED_ON"]', ""))
    serve = [sys.executable, "-m", "toolwire_server", "--config", str(config), "--stdio", "--agent", "plain"]
    state, _ = run_calls(
        tmp_path, [serve], ("own__pid", {}), ("time__get_current_time", {"timezone": "UTC"}), ("echo", {"text": "k"})
    )
    outcomes = [(c["name"], c.get("error_kind")) for step in state["steps"] for c in step.get("results", [])]
    assert outcomes[0] == ("own__pid", None)
    assert outcomes[1] == ("time__get_current_time", "unknown_tool")  # not in its listing: the agent never sent it
    assert outcomes[2] == ("echo", None)


async def test_an_http_upstream_gets_the_hosts_credential_never_the_agents(tmp_path: Path) -> None:
    """The upstream knows two tokens: the host's (agent `gateway`) and the agent's (agent `leaked`); every call it
    saw must have come with the host's."""
    upstream_dir = tmp_path / "upstream"
    upstream_dir.mkdir()
    tokens = tokens_file(upstream_dir, {"gateway": ("host-secret", ["*"]), "leaked": ("tok-ops", ["*"])})
    upstream_config = upstream_dir / "server.toml"
    upstream_config.write_text(tokens.read_text() + "\n[audit]\nsqlite = 'audit.db'\nflush_s = 0.05\n")
    env = clean_env(UPSTREAM_TOKEN="host-secret")
    with HttpServer(f"--config={upstream_config}", f"{REPO}/tests/server/upstream_tools.py:registry") as upstream:
        entry = f'\n[upstreams.own]\nurl = "{upstream.url}"\ntoken_env = "UPSTREAM_TOKEN"\n'
        with HttpServer(f"--config={_config(tmp_path, entry, time=False)}", env=env) as server:
            async with http_client(server.url, token="tok-ops") as ops:
                assert _kind(await ops.call_tool("own__pid", {})) == "ok"
                assert _kind(await ops.call_tool("own__grow", {"name": "x"})) == "ok"
    agents = {r["agent"] for r in read_records(str(upstream_dir / "audit.db"))}
    assert agents == {"gateway"}


def test_serve_check_names_a_bad_upstream_entry_in_one_line(tmp_path: Path) -> None:
    bad = {
        'command = "no-such-program-here"': "upstreams.x.command = 'no-such-program-here': no such executable",
        'url = "https://u.example/mcp"\ncommand = "ls"': "upstreams.x: give command = ",
        'url = "https://u.example/mcp"\ntoken_env = "UNSET_TOKEN_VAR"': "x.token_env: $UNSET_TOKEN_VAR is not set",
        'command = "ls"\ncolour = "red"': "upstreams.x.colour: unknown key; allowed here: args, command, env, env_from",
    }
    for entry, message in bad.items():
        config = _config(tmp_path, f"\n[upstreams.x]\n{entry}\n")
        done = CliRunner().invoke(main, ["check", str(config)])
        assert done.exit_code == 1, done.output
        assert message in done.output and len(done.output.strip().splitlines()) == 1, done.output
    config = _config(tmp_path, '\n[upstreams."bad name!"]\ncommand = "ls"\n')
    done = run_toolwire("check", str(config), env=clean_env())  # as a user runs it: no traceback
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "upstreams.bad name!" in done.stderr
    config = _config(tmp_path, _stdio_upstream("own", OWN), time=False)
    done = CliRunner().invoke(main, ["check", str(config)])
    assert done.exit_code == 0, done.output
    assert done.output.strip().endswith("audit on, 1 upstream (not started)")


@pytest.mark.parametrize("pattern", ["tme__*"])
def test_a_grant_for_no_upstream_is_still_a_typo(tmp_path: Path, pattern: str) -> None:
    config = _config(tmp_path, _stdio_upstream("own", OWN), time=False)
    config.write_text(config.read_text().replace('"own__pid"]', f'"own__pid", "{pattern}"]'))
    done = CliRunner().invoke(main, ["check", str(config)])
    assert done.exit_code == 1 and f"'{pattern}', which matches no tool" in done.output
