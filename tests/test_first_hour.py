"""Your own tools with no key, from the shell: write a `tools.py`, see what it offers (`toolwire tools`), call one
tool (`toolwire call`), run an agent on it with the test model (`--model test`) and with turns you write
(`--model script:FILE`). Each command runs in its own process on a real tool server (stdio, and HTTP under uvicorn),
with no provider key in the environment."""

import json
import re
import subprocess
from pathlib import Path

import pytest

from helpers.cli import clean_env, run_toolwire
from helpers.servers import HttpServer
from helpers.user_tools import SERVER, TOOLS


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "tools.py").write_text(TOOLS)
    return tmp_path


def toolwire(folder: Path, *args: str) -> "subprocess.CompletedProcess[str]":
    """`toolwire ARGS` started in the folder that holds tools.py, with no provider key, its runs in that folder."""
    db = ("--db", str(folder / "runs.sqlite3")) if args[0] == "run" else ()
    return run_toolwire(*args, *db, env=clean_env(), cwd=folder)


def one_line_error(done: "subprocess.CompletedProcess[str]") -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    return done.stderr.strip()


def test_tools_lists_names_arguments_annotations_and_descriptions(folder: Path) -> None:
    done = toolwire(folder, "tools", *SERVER)
    assert done.returncode == 0, done.stderr
    rows = {line.split("│")[1].strip(): line for line in done.stdout.splitlines() if line.count("│") >= 5}
    assert set(rows) == {"add", "divide", "greet"}, done.stdout  # and the header, between ┃
    assert re.search(r"a\*: integer, b: integer .*not destructive, idempotent .*Add two whole numbers\.", rows["add"])
    assert 'name*: string, tone*: "warm"|"curt", times: integer' in rows["greet"], rows["greet"]

    listed = toolwire(folder, "tools", *SERVER, "--json")
    assert listed.returncode == 0, listed.stderr
    by_name = {tool["name"]: tool for tool in json.loads(listed.stdout)}
    assert by_name["greet"]["inputSchema"]["properties"]["tone"]["enum"] == ["warm", "curt"]
    assert by_name["greet"]["inputSchema"]["required"] == ["name", "tone"]
    assert by_name["add"]["annotations"] == {"destructiveHint": False, "idempotentHint": True}
    assert {tool["server"] for tool in by_name.values()} == {"tools"}


def test_tools_and_call_reach_an_http_server_with_its_token(folder: Path) -> None:
    (folder / "tokens.toml").write_text('[agents.me]\ntoken_env = "MY_TOKEN"\ntools = ["add"]\n')
    env = clean_env(MY_TOKEN="tok-me")
    with HttpServer(f"{folder / 'tools.py'}:registry", "--tokens", str(folder / "tokens.toml"), env=env) as server:
        reach = ("--server-url", server.url, "--token-env", "MY_TOKEN")
        listed = run_toolwire("tools", *reach, "--json", env=env, cwd=folder)
        assert listed.returncode == 0, listed.stderr
        assert [tool["name"] for tool in json.loads(listed.stdout)] == ["add"]  # the grant's tools only
        added = run_toolwire("call", "add", "a=2", "b=40", *reach, env=env, cwd=folder)
        assert (added.returncode, added.stdout) == (0, "42\n"), added.stderr


def test_call_prints_the_result_and_its_structured_content(folder: Path) -> None:
    added = toolwire(folder, "call", "add", "a=2", "b=40", *SERVER)
    assert (added.returncode, added.stdout) == (0, "42\n"), added.stderr
    greeted = toolwire(
        folder, "call", "greet", "--args", '{"name": "Ann", "tone": "warm"}', "times=2", *SERVER, "--json"
    )
    assert greeted.returncode == 0, greeted.stderr
    assert json.loads(greeted.stdout) == {
        "tool": "greet",
        "isError": False,
        "text": "Hello, Ann! Hello, Ann!",
        "structuredContent": {"result": "Hello, Ann! Hello, Ann!"},
    }
    named = toolwire(folder, "call", "greet", "name=42", "tone=curt", *SERVER)  # a string stays a string
    assert (named.returncode, named.stdout) == (0, "42.\n"), named.stderr


def test_call_exits_1_when_the_tool_answers_with_an_error(folder: Path) -> None:
    divided = toolwire(folder, "call", "divide", "a=1", "b=0", *SERVER)
    assert divided.returncode == 1 and divided.stdout == "", divided.stdout
    assert "divide failed: float division by zero" in divided.stderr
    wrong = toolwire(folder, "call", "add", "a=two", *SERVER, "--json")
    assert wrong.returncode == 1, wrong.stderr
    assert json.loads(wrong.stdout)["isError"] is True and "bad arguments for add" in json.loads(wrong.stdout)["text"]


def test_a_mistake_in_a_call_is_one_line(folder: Path) -> None:
    unknown = one_line_error(toolwire(folder, "call", "multiply", "a=2", *SERVER))
    assert (
        unknown
        == "Error: no tool 'multiply' on these servers (their tools: add, divide, greet); `toolwire tools` lists them"
    )
    bad_json = one_line_error(toolwire(folder, "call", "add", "--args", "{a: 2}", *SERVER))
    assert bad_json.startswith("Error: --args is not JSON (") and """e.g. --args '{"order_id": "A123"}'""" in bad_json
    not_a_pair = one_line_error(toolwire(folder, "call", "add", "a", *SERVER))
    assert not_a_pair == "Error: 'a': give arguments as KEY=VALUE (e.g. order_id=A123) or --args JSON"
    no_server = one_line_error(toolwire(folder, "tools"))
    assert "name a tool server: --server 'CMD' or --server-url URL" in no_server


def test_run_with_the_test_model_calls_each_tool_once_and_answers_with_what_came_back(folder: Path) -> None:
    done = toolwire(folder, "run", "Try my tools", "--model", "test", *SERVER)
    assert done.returncode == 0, done.stdout + done.stderr
    assert 'step 1 | add({"a": 0}) | 1 |' in done.stdout  # required arguments only: b keeps its default
    assert 'step 1 | divide({"a": 0.0, "b": 0.0}) | ERROR: divide failed: float division by zero |' in done.stdout
    assert 'step 1 | greet({"name": "a", "tone": "warm"}) | Hello, a! |' in done.stdout
    answer = re.search(r"^answer: (.*)$", done.stdout, re.M)
    assert answer is not None, done.stdout
    assert json.loads(answer.group(1)) == {
        "add": 1,
        "divide": "ERROR: divide failed: float division by zero",
        "greet": "Hello, a!",
    }
    assert "no charge (a model with no key)" in done.stdout

    only = toolwire(folder, "run", "Try add", "--model", "test:add", *SERVER)
    assert only.returncode == 0, only.stdout + only.stderr
    assert 'answer: {"add":1}' in only.stdout and "divide(" not in only.stdout


def test_run_with_a_script_plays_the_turns_written(folder: Path) -> None:
    turns = [
        {"calls": [{"name": "add", "args": {"a": 2, "b": 3}}, {"name": "multiply", "args": {"a": 2}}]},
        {"text": "2 + 3 is 5."},
    ]
    (folder / "turns.json").write_text(json.dumps(turns))
    done = toolwire(folder, "run", "What is 2 + 3?", "--model", "script:turns.json", *SERVER)
    assert done.returncode == 0, done.stdout + done.stderr
    assert 'step 1 | add({"a": 2, "b": 3}) | 5 |' in done.stdout
    assert (
        "step 1 | multiply({\"a\": 2}) | ERROR: unknown tool 'multiply'. Tools you may call: add, divide, greet."
        in (done.stdout)
    )
    assert "answer: 2 + 3 is 5." in done.stdout


def test_a_toml_script_that_runs_out_ends_with_an_answer_saying_so(folder: Path) -> None:
    (folder / "turns.toml").write_text(
        '[[turns]]\ncalls = [{ name = "greet", args = { name = "Bo", tone = "curt" } }]\n'
    )
    done = toolwire(folder, "run", "Greet Bo", "--model", "script:turns.toml", *SERVER)
    assert done.returncode == 0, done.stdout + done.stderr
    assert 'step 1 | greet({"name": "Bo", "tone": "curt"}) | Bo. |' in done.stdout
    assert (
        'answer: The script turns.toml ran out of turns: its 1 turns were all played. End it with a {"text": "..."} '
        "turn to give the answer yourself." in done.stdout
    )


def test_a_script_function_of_the_messages_and_tools(folder: Path) -> None:
    (folder / "agent_turns.py").write_text(
        "def turns(messages, tools):\n"
        "    if messages[-1].role == 'tool':\n"
        "        return 'the sum is ' + messages[-1].content\n"
        "    names = sorted(t.name for t in tools)\n"
        "    return {'calls': [{'name': 'add', 'args': {'a': len(names), 'b': 10}}]}\n"
    )
    done = toolwire(folder, "run", "Add", "--model", "script:agent_turns.py:turns", *SERVER)
    assert done.returncode == 0, done.stdout + done.stderr
    assert 'step 1 | add({"a": 3, "b": 10}) | 13 |' in done.stdout and "answer: the sum is 13" in done.stdout


def test_a_script_that_is_not_one_is_one_line(folder: Path) -> None:
    (folder / "bad.json").write_text('[{"call": [{"name": "add"}]}]')
    bad = one_line_error(toolwire(folder, "run", "x", "--model", "script:bad.json", *SERVER))
    assert re.fullmatch(
        r"Error: model 'script:/\S+/bad\.json': turn 1: call: Extra inputs are not permitted; a turn is "
        r'\{"calls": \[\{"name": "add", "args": \{"a": 2, "b": 3\}\}\]\} or \{"text": "the answer"\}',
        bad,
    ), bad
    missing = one_line_error(toolwire(folder, "run", "x", "--model", "script:nowhere.json", *SERVER))
    assert "no file " in missing and "nowhere.json" in missing
