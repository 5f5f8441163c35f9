"""`toolwire agent serve`'s mistakes: one line and exit 2, nothing served."""

from helpers.cli import clean_env, run_toolwire

SERVER = ("--server", "toolwire serve examples.support_tools:registry --stdio", "--model", "test")


def test_one_protocol_named() -> None:
    for both_or_none in ((), ("--a2a", "--ag-ui")):
        done = run_toolwire("agent", "serve", *both_or_none, *SERVER, env=clean_env())
        assert done.returncode == 2 and "name one protocol to serve: --a2a or --ag-ui" in done.stderr
        assert "Traceback" not in done.stderr


def test_beyond_loopback_without_tokens() -> None:
    done = run_toolwire("agent", "serve", "--ag-ui", "--host", "0.0.0.0", *SERVER, env=clean_env())
    assert done.returncode == 2 and "give --tokens FILE, or bind 127.0.0.1" in done.stderr
    assert "Traceback" not in done.stderr


def test_no_tool_server() -> None:
    done = run_toolwire("agent", "serve", "--ag-ui", "--model", "test", env=clean_env())
    assert done.returncode == 2 and "name at least one tool server" in done.stderr
