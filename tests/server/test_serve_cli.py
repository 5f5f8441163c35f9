"""`toolwire serve` refuses bad input with a message that says what a correct call looks like."""

import subprocess
from pathlib import Path

import pytest

from helpers.servers import REPO, TEST_TOOLS, serve_argv
from toolwire_server.auth.access import AccessConfigError, parse_access
from toolwire_server.tools.loading import TargetError, load_registry


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    argv = serve_argv(*args)
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("no_such_module:registry", "--stdio"), "cannot import 'no_such_module'"),
        ((TEST_TOOLS, "--stdio", "--agent", "x"), "--agent needs an access config"),
        ((TEST_TOOLS, "--stdio", "--workers", "2"), "--workers is for --http (for the isolated tools' pool, use"),
        ((TEST_TOOLS, "--http", "--workers", "2", "--replica", "r1"), "--replica names one process's sessions"),
        ((TEST_TOOLS, "--http", "--replica", "r 1"), "replica name 'r 1' must be 1-32 letters, digits"),
    ],
)
def test_bad_serve_invocations_explain_themselves(args: tuple[str, ...], expected: str) -> None:
    proc = _serve(*args)
    assert proc.returncode != 0
    assert expected in proc.stderr, proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("examples.skills", "'examples.skills' holds no Registry: create one at its top level"),
        (":registry", "is not MODULE:ATTR (e.g. examples.support_tools:registry"),
        ("examples.support_tools:nothing", "has no attribute 'nothing'"),
        ("examples.support_tools:DB_ENV", "is a str, not a toolwire_server.Registry"),
    ],
)
def test_bad_targets_explain_themselves(target: str, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    with pytest.raises(TargetError) as caught:
        load_registry(target)
    assert expected in str(caught.value)


def test_bad_access_config_names_the_problem(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text('[agents.reader]\ntools = ["echo"]\n')
    proc = _serve(TEST_TOOLS, "--http", "--tokens", str(tokens))
    assert proc.returncode != 0 and "agents.reader needs a non-empty 'token'" in proc.stderr


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({}, "expected a table 'agents'"),
        ({"agents": {"a": {"token": "t", "tools": "echo"}}}, "agents.a.tools must be a list of glob patterns"),
        ({"agents": {"a": {"token": "t", "tools": []}, "b": {"token": "t", "tools": []}}}, "reuses the token"),
        ({"agents": {"a": {"token_env": "TOOLWIRE_TEST_UNSET_TOKEN", "tools": []}}}, "is unset or empty"),
    ],
)
def test_access_config_errors(data: dict[str, object], expected: str) -> None:
    with pytest.raises(AccessConfigError, match=expected.replace("(", r"\(")):
        parse_access(data, "tokens.toml")


def test_grants_match_globs_and_tokens() -> None:
    access = parse_access({"agents": {"r": {"token": "t1", "tools": ["get_*", "calculator"]}}}, "x")
    grant = access.grant_for_token("t1")
    assert grant is not None and grant.agent == "r"
    assert grant.allows("get_order") and grant.allows("calculator") and not grant.allows("issue_refund")
    assert access.grant_for_token("t2") is None and access.grant_for_token("") is None


@pytest.mark.parametrize(
    ("grant", "said"),
    [
        ('["echo", "ecoh"]', "grants agent 'reader' 'ecoh', which names no tool of this server (its tools: add, "),
        ('["echo", "get_*"]', "grants agent 'reader' 'get_*', which matches no tool of this server (its tools: add, "),
    ],
)
def test_a_grant_of_no_registered_tool_stops_serve(tmp_path: Path, grant: str, said: str) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(f'[agents.reader]\ntoken = "t1"\ntools = {grant}\n')
    for transport in ("--http", "--stdio"):
        proc = _serve(TEST_TOOLS, transport, "--tokens", str(tokens), "--port", "0")
        assert proc.returncode == 1, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and said in lines[0] and "echo" in lines[0], proc.stderr
