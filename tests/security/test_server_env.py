"""Hole 4: a stdio tool server gets a documented minimal environment plus exactly what its spec passes; none of
toolwire's own secrets (the store's URL, the server tokens, OTLP auth headers) nor a provider key; `-v` names the
variables a server was given, never their values."""

import sys
from pathlib import Path

import pytest

from helpers.cli import REPO, clean_env, run_toolwire
from toolwire_client.assembly.sources import build_sources
from toolwire_client.config import ServerSpec
from toolwire_client.tools.source import RunContext
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import ToolCall

SECRETS = {
    "TOOLWIRE_DB": "postgresql://toolwire:store-password@127.0.0.1:5432/runs",
    "TOOLWIRE_TOKENS": "[agents.a]\ntoken = 'server-token'",
    "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Basic bGFuZ2Z1c2U6c2VjcmV0",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-api-key=trace-secret",
    "ANTHROPIC_API_KEY": "sk-ant-provider-key",
    "OPENAI_API_KEY": "sk-openai-provider-key",
    "USERS_OWN_KEY": "the-tools-own-api-key",
}
ENV_TOOLS = [sys.executable, "-m", "toolwire_server", "tests/security/env_tools.py:registry", "--stdio"]


async def test_a_server_gets_the_base_and_what_its_spec_names_and_no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")  # where to trace: not a secret
    lines: list[str] = []
    spec = ServerSpec(
        name="env", command=ENV_TOOLS, cwd=str(REPO), env={"SET_BY_SPEC": "1"}, pass_env=["USERS_OWN_KEY", "UNSET_X"]
    )
    sources = build_sources([spec], stderr_sink=lambda server, line: lines.append(f"{server}: {line}"))
    async with ToolBox(sources) as box:
        names = set((await box.call(ToolCall(id="n", name="env_names"), RunContext("r"))).content.split(","))
        passed = await box.call(
            ToolCall(id="v", name="env_value", arguments={"name": "USERS_OWN_KEY"}), RunContext("r")
        )
    for secret in set(SECRETS) - {"USERS_OWN_KEY"}:
        assert secret not in names, f"{secret} reached the tool server"
    assert {"PATH", "HOME", "SET_BY_SPEC", "USERS_OWN_KEY", "OTEL_EXPORTER_OTLP_ENDPOINT"} <= names
    assert passed.content == "the-tools-own-api-key"
    [said] = [line for line in lines if "environment variables" in line]
    assert "USERS_OWN_KEY" in said and "SET_BY_SPEC" in said and "not set here, so not passed: UNSET_X" in said
    assert not any(value in said for value in SECRETS.values())  # names only
    assert "TOOLWIRE_DB" not in said


def test_the_cli_passes_a_named_variable_and_says_so_with_v(tmp_path: Path) -> None:
    env = clean_env(
        **{k: v for k, v in SECRETS.items() if not k.endswith("_API_KEY")},
        TOOLWIRE_SUPPORT_DB=str(tmp_path / "support.sqlite3"),
    )
    serve = f"{sys.executable} -m toolwire_server examples.support_tools:registry --stdio"
    done = run_toolwire(
        "run", "What does order A123 cost with GST?", "--model", "scripted:recovers", "--server", serve,
        "--server-env", "TOOLWIRE_SUPPORT_DB", "--server-env", "MODE=test", "--db", str(tmp_path / "runs.db"), "-v",
        env=env,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "5900.0 rupees" in out
    assert (tmp_path / "support.sqlite3").exists()  # the server used the database the named variable points at
    [said] = [line for line in out.splitlines() if "started with environment variables" in line]
    assert "TOOLWIRE_SUPPORT_DB" in said and "MODE" in said and "TOOLWIRE_DB" not in said
    assert "OTEL_EXPORTER_OTLP_HEADERS" not in said and "TOOLWIRE_TOKENS" not in said
    assert str(tmp_path) not in said  # names, never values


def test_a_bad_server_env_is_one_line(tmp_path: Path) -> None:
    bad = run_toolwire(
        "run", "a task", "--model", "scripted:recovers", "--server", "python3 -c pass", "--server-env", "1BAD=x",
        "--db", str(tmp_path / "runs.db"), env=clean_env(),
    )  # fmt: skip
    assert bad.returncode == 2 and "give NAME or NAME=VALUE" in bad.stderr and "Traceback" not in bad.stderr
