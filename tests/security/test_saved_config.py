"""Hole 3: whoever can write `runs.state` could make `toolwire resume` start any command (an edited `sh -c ...`
ran), send a token to any URL, or take a tool off the list that needs approval. A saved config now carries this
user's seal (an HMAC under a key in the user data dir); an edited one is refused with one readable line and nothing
starts, unless the user names servers they trust (`resume --servers FILE`), which are started instead."""

import sys
from pathlib import Path
from typing import Any

from store.procs import REPO, rows, run_cli, setup_dirs, tamper, waiting_run

State = dict[str, Any]


def _run_a_command(pwned: Path) -> Any:
    def edit(state: State) -> None:
        state["config"]["servers"][0]["command"] = ["sh", "-c", f"touch {pwned}"]

    return edit


def _drop_risky(state: State) -> None:
    state["config"]["risky_tools"] = []


def _send_token_elsewhere(state: State) -> None:
    state["config"]["servers"][0] = {"name": "durable", "url": "http://127.0.0.1:9/mcp", "token_env": "HOME"}


async def test_an_edited_server_command_never_starts(db: str, tmp_path: Path) -> None:
    tools_db, gate = setup_dirs(tmp_path)
    pwned = tmp_path / "pwned"
    await waiting_run(db, "run_cmd", tools_db, gate)
    tamper(db, "run_cmd", _run_a_command(pwned))
    assert (await run_cli(db, "approve", "run_cmd", "call_refund")).returncode == 0
    resumed = await run_cli(db, "resume", "run_cmd")
    assert resumed.returncode == 1, resumed.stdout + resumed.stderr
    [line] = resumed.stderr.strip().splitlines()
    assert "run run_cmd's saved configuration does not carry this user's seal" in line
    assert "--servers FILE" in line and "Traceback" not in resumed.stderr
    assert not pwned.exists()
    assert rows(tools_db, "SELECT COUNT(*) FROM refunds") == [(0,)]


async def test_other_edits_of_the_config_are_refused_too(db: str, tmp_path: Path) -> None:
    """Taking the refund off the risky list (it would run unapproved) or pointing the server at another URL with a
    token variable: the seal does not hold, so nothing is rebuilt from the edited config."""
    tools_db, gate = setup_dirs(tmp_path)
    for run_id, edit in (("run_risky", _drop_risky), ("run_url", _send_token_elsewhere)):
        await waiting_run(db, run_id, tools_db, gate)
        tamper(db, run_id, edit)
        resumed = await run_cli(db, "resume", run_id)
        assert resumed.returncode == 1 and "does not carry this user's seal" in resumed.stderr, resumed.stderr
    assert rows(tools_db, "SELECT COUNT(*) FROM refunds") == [(0,)]


async def test_the_users_own_run_resumes_and_a_servers_file_replaces_an_edited_server(db: str, tmp_path: Path) -> None:
    tools_db, gate = setup_dirs(tmp_path)
    await waiting_run(db, "run_ok", tools_db, gate)
    assert (await run_cli(db, "approve", "run_ok", "call_refund")).returncode == 0
    resumed = await run_cli(db, "resume", "run_ok")
    assert "run_ok: done" in resumed.stdout, resumed.stdout + resumed.stderr  # sealed by this user: as saved

    pwned = tmp_path / "pwned"
    await waiting_run(db, "run_file", tools_db, gate)
    tamper(db, "run_file", _run_a_command(pwned))
    assert (await run_cli(db, "approve", "run_file", "call_refund")).returncode == 0
    servers = tmp_path / "servers.toml"
    servers.write_text(
        "[servers.durable]\n"
        f'command = ["{sys.executable}", "-m", "toolwire_server", "tests/store/durable_tools.py:registry", "--stdio"]\n'
        f'cwd = "{REPO}"\n'
        f'env = {{ DURABLE_TEST_DB = "{tools_db}", DURABLE_GATE_DIR = "{gate}" }}\n'
    )
    from_file = await run_cli(db, "resume", "run_file", "--servers", str(servers))
    assert "run_file: done" in from_file.stdout, from_file.stdout + from_file.stderr
    assert not pwned.exists()
    assert rows(tools_db, "SELECT COUNT(*) FROM refunds") == [(2,)]  # run_ok's and run_file's, once each


async def test_a_mistake_in_the_servers_file_is_one_line(db: str, tmp_path: Path) -> None:
    servers = tmp_path / "servers.toml"
    servers.write_text('[servers.durable]\ncommand = ["x"]\nurl = "http://127.0.0.1:1/mcp"\n')
    refused = await run_cli(db, "resume", "run_none", "--servers", str(servers))
    assert refused.returncode == 1 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert f"servers file {servers}: servers.durable" in refused.stderr
