"""A user's `toolwire run` against server-filesystem with a loopback OpenAI model that records each request: a
200,000-character file read through `read_text_file` reaches the model cut to the client's default cap, with the
note; `write_file` (annotated `destructiveHint`) waits, and `toolwire approvals` and `trace show` say why."""

import json
from pathlib import Path

from external.servers import needs, npm_server
from helpers.cli import clean_env, run_toolwire
from helpers.fake_providers import FakeProvider, openai_call, openai_completion
from toolwire_client import texts
from toolwire_client.calls import DESTRUCTIVE
from toolwire_client.mistakes import WAITING
from toolwire_client.run.context_view import DEFAULT_INLINE_RESULT_CHARS
from toolwire_client.run.limits import DEFAULT_MAX_RESULT_CHARS

FILESYSTEM = npm_server("server-filesystem")
BIG = "".join(f"{line:07d}\n" for line in range(25_000))
"""200,000 characters, each line its own number: where a cut falls shows."""


@needs(FILESYSTEM)
def test_a_big_read_is_cut_and_write_file_waits_saying_why(tmp_path: Path) -> None:
    files = tmp_path / "files"
    files.mkdir()
    (files / "big.txt").write_text(BIG)
    written = files / "new.txt"
    env = clean_env(
        OPENAI_API_KEY="sk-test", TOOLWIRE_DB=str(tmp_path / "runs.db"), TOOLWIRE_LOG_DIR=str(tmp_path / "logs")
    )
    with FakeProvider() as fake:
        fake.push(
            openai_completion(None, [openai_call("read", "read_text_file", {"path": str(files / "big.txt")})]),
            openai_completion(None, [openai_call("write", "write_file", {"path": str(written), "content": "hi"})]),
        )
        server = f"{FILESYSTEM[0]} {FILESYSTEM[1]} {files}"
        args = ["--model", "openai:gpt-fake", "--base-url", fake.openai_url, "--server", server, "--json"]
        done = run_toolwire("run", "read big.txt, then write new.txt", *args, env=env)
    assert done.returncode == WAITING and "Traceback" not in done.stderr, done.stderr  # write_file waits: exit 4
    state = json.loads(done.stdout)
    assert state["status"] == "waiting_for_approval" and not written.exists()

    assert len(BIG) == 200_000 and len(BIG) > DEFAULT_MAX_RESULT_CHARS
    cut = BIG[:DEFAULT_MAX_RESULT_CHARS] + texts.result_cut(DEFAULT_MAX_RESULT_CHARS, len(BIG))
    assert state["steps"][0]["results"][0]["content"] == cut  # the cap, saved whole in the run
    head = cut[:DEFAULT_INLINE_RESULT_CHARS] + texts.kept_out("read", DEFAULT_INLINE_RESULT_CHARS, len(cut))
    [sent] = [m for m in fake.requests[1].body["messages"] if m["role"] == "tool"]
    assert sent == {"role": "tool", "tool_call_id": "read", "content": head}  # the model reads its head
    assert len(json.dumps(fake.requests[1].body)) < len(BIG) // 4  # nothing else carried the file
    assert state["steps"][0]["results"][0]["truncated"]

    [waiting] = state["pending"]
    assert waiting["call"]["name"] == "write_file" and waiting["approval_reason"] == DESTRUCTIVE
    listed = run_toolwire("approvals", env=env)
    assert listed.returncode == 0, listed.stderr
    [row] = [line for line in listed.stdout.splitlines() if "write_file" in line]
    assert DESTRUCTIVE in row, listed.stdout
    shown = run_toolwire("trace", "show", state["run_id"], env=env)
    assert shown.returncode == 0, shown.stderr
    [line] = [line for line in shown.stdout.splitlines() if line.startswith("step 2 | write_file(")]
    assert f"| not run: waiting for approval ({DESTRUCTIVE}) |" in line, shown.stdout
