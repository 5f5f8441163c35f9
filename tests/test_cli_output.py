"""What the terminal shows: the step table alone on stdout (the tool server's own lines go to a per-run log, or
inline and prefixed with -v), one warning line for an OTLP endpoint nobody listens on, empty lists said in words,
--json for scripts, help texts without internal jargon, and a demo that leaves nothing behind."""

import json
import re
import sys
from pathlib import Path

import anyio
import click

from helpers.cli import clean_env, run_toolwire
from helpers.servers import free_port
from toolwire_client.cli import main
from toolwire_client.store import open_store

SUPPORT = f"{sys.executable} -m toolwire_server examples.support_tools:registry --stdio"
GST = "What does order A123 cost in total with 18% GST?"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return clean_env(
        TOOLWIRE_DB=str(tmp_path / "runs.db"),
        TOOLWIRE_LOG_DIR=str(tmp_path / "logs"),
        TOOLWIRE_SUPPORT_DB=str(tmp_path / "support.db"),
        **extra,
    )


def test_the_tool_servers_lines_go_to_the_runs_log_not_between_the_steps(tmp_path: Path) -> None:
    # scripted:repeats asks for an order that does not exist: the support server logs a warning per call
    done = run_toolwire("run", "order A123?", "--model", "scripted:repeats", "--server", SUPPORT, env=_env(tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr  # stopped by the repeat guard
    assert "WARNING" not in done.stdout + done.stderr
    steps = [line for line in done.stdout.splitlines() if line.startswith("  step ")]
    assert len(steps) == 3 and "asked for the third time" in steps[-1]
    log = Path(done.stdout.strip().splitlines()[-1].removeprefix("tool server output: "))
    assert log.parent == tmp_path / "logs" and log.name.startswith("run_")
    assert "support_tools | " in log.read_text() and "tool get_order raised ValueError" in log.read_text()


def test_verbose_shows_them_inline_prefixed_with_the_servers_name(tmp_path: Path) -> None:
    env = _env(tmp_path)
    done = run_toolwire("run", "order A123?", "--model", "scripted:repeats", "--server", SUPPORT, "-v", env=env)
    assert re.search(r"^support_tools \| .* WARNING tool get_order raised ValueError", done.stderr, flags=re.M)
    assert "WARNING" not in done.stdout and not (tmp_path / "logs").exists()


def test_otlp_with_nothing_listening_is_one_warning_line(tmp_path: Path) -> None:
    nobody = f"http://127.0.0.1:{free_port()}"
    env = _env(tmp_path, OTEL_EXPORTER_OTLP_ENDPOINT=nobody)
    done = run_toolwire("run", GST, "--model", "scripted:recovers", "--server", SUPPORT, "--trace", "otlp", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        f"warning: spans not exported: nothing answers at {nobody}/v1/traces (Connection refused); start a "
        "receiver (e.g. Phoenix) or set OTEL_EXPORTER_OTLP_ENDPOINT"
    ]
    assert "answer: Order A123 costs 5900.0 rupees with 18% GST." in done.stdout


async def _empty_store(db: str) -> None:
    await (await open_store(db)).aclose()


def test_empty_lists_say_so_and_json_is_there_for_scripts(tmp_path: Path) -> None:
    env, db = _env(tmp_path), str(tmp_path / "runs.db")
    anyio.run(_empty_store, db)  # `runs` and `approvals` read a store, they make none
    assert (
        run_toolwire("runs", env=env).stdout == f"no saved runs in {db}; `toolwire run` or `toolwire demo` saves one\n"
    )
    assert run_toolwire("approvals", env=env).stdout == f"no calls wait for approval in {db}\n"
    assert json.loads(run_toolwire("runs", "--json", env=env).stdout) == []
    assert json.loads(run_toolwire("approvals", "--json", env=env).stdout) == {
        "waiting": [],
        "tampered": [],
        "decided": [],
        "answered": [],
        "decided_not_resumed": [],
    }

    done = run_toolwire(
        "run", "Refund A123", "--model", "scripted:support_demo", "--server", SUPPORT, "--json", env=env
    )
    state = json.loads(done.stdout)  # stdout is the final state alone; the step table went to stderr
    assert state["status"] == "waiting_for_approval" and "  step 1 | get_order(" in done.stderr
    run_id = state["run_id"]
    [listed] = json.loads(run_toolwire("runs", "--json", env=env).stdout)
    assert (listed["run_id"], listed["status"]) == (run_id, "waiting_for_approval")
    [waiting] = json.loads(run_toolwire("approvals", "--json", env=env).stdout)["waiting"]
    assert (waiting["run_id"], waiting["call"]["name"], waiting["state"]) == (
        run_id,
        "issue_refund",
        "pending_approval",
    )
    shown = json.loads(run_toolwire("trace", "show", run_id, "--json", env=env).stdout)
    assert [c["name"] for c in shown["steps"][0]["calls"]] == ["get_order", "search_orders"]
    assert shown["steps"][-1]["calls"][0]["observation"] is None  # the refund waits for a person
    exported = json.loads(run_toolwire("trace", "export", run_id, env=env).stdout)  # JSON without --json
    assert exported["run_id"] == run_id and exported["messages"]


def test_replay_says_which_time_a_repeat_was_asked_for(tmp_path: Path) -> None:
    env = _env(tmp_path)
    done = run_toolwire("run", "order A123?", "--model", "scripted:repeats", "--server", SUPPORT, "--json", env=env)
    run_id = json.loads(done.stdout)["run_id"]
    replayed = run_toolwire("replay", run_id, "--repeat-limit", "2", env=env)
    assert replayed.returncode == 1 and "asked for the second time" in replayed.stdout, replayed.stdout
    assert "first time" not in replayed.stdout


def _commands(group: click.Group, path: str = "toolwire") -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    for name, command in sorted(group.commands.items()):
        found.append((f"{path} {name}", command))
        if isinstance(command, click.Group):
            found += _commands(command, f"{path} {name}")
    return found


def test_help_texts_use_no_internal_jargon() -> None:
    for path, command in _commands(main):
        texts = [command.help or "", *(getattr(p, "help", None) or "" for p in command.params)]
        for text in texts:
            assert "seed" not in text.lower(), f"{path}: {text}"


def test_the_demo_leaves_nothing_in_the_working_folder_or_the_temp_folder(tmp_path: Path) -> None:
    work, temp, data = tmp_path / "work", tmp_path / "tmp", tmp_path / "data"
    for folder in (work, temp):
        folder.mkdir()
    env = clean_env(TMPDIR=str(temp), XDG_DATA_HOME=str(data), XDG_STATE_HOME=str(tmp_path / "state"))
    done = run_toolwire("demo", env=env, cwd=work, timeout_s=180)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert list(work.iterdir()) == [] and list(temp.iterdir()) == []
    store = data / "toolwire" / "runs.db"
    assert f"the run is saved in {store}: `toolwire trace show run_" in done.stdout
    assert " done " in run_toolwire("runs", env=env).stdout
