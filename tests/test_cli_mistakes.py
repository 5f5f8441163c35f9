"""Every mistake a new user makes with the `toolwire` command ends in one readable line and the right exit status:
2 when the command line names something that does not exist or is out of range, 1 when the run or the command
failed. No traceback, unless TOOLWIRE_DEBUG=1 asks for one. Each case runs the installed command in its own process."""

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from helpers.cli import clean_env, packaged_scripts, run_toolwire
from helpers.servers import TEST_TOOLS, HttpServer, free_port
from toolwire_client.store import open_store

PY = sys.executable
SUPPORT = f"{PY} -m toolwire_server examples.support_tools:registry --stdio"
NOTHING_LISTENS = f"http://127.0.0.1:{free_port()}/mcp"


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    tokens = tmp_path_factory.mktemp("tokens") / "tokens.toml"
    tokens.write_text('[agents.a]\ntoken = "tok-a"\ntools = ["*"]\n')
    with HttpServer(TEST_TOOLS, "--tokens", str(tokens)) as server:
        yield server


RUN = ("run", "What does order A123 cost?")
SCRIPTED = ("--model", "scripted:recovers")
UNKNOWN_RUN = r"Error: no run 'run_does_not_exist' in this store; `toolwire runs` lists the runs it holds$"

# (id, arguments, extra environment, exit status, the first line it prints (a regex), nothing may be saved)
CASES: list[tuple[str, tuple[str, ...], dict[str, str], int, str, bool]] = [
    # the model
    (
        "unknown-script",
        (*RUN, "--model", "scripted:nope", "--server", "true"),
        {},
        2,
        r"Error: unknown model 'scripted:nope': use one of anthropic:claude-sonnet-4-5 .*"
        r"The bundled examples' scripted models: scripted:NAME, NAME one of "
        rf"{re.escape(', '.join(packaged_scripts()))}$",
        False,
    ),
    (
        "misspelt-provider",
        (*RUN, "--model", "antropic:claude", "--server", "true"),
        {},
        2,
        r"Error: unknown model 'antropic:claude': use one of anthropic:claude-sonnet-4-5 \(the Anthropic Messages",
        False,
    ),
    (
        "no-model-no-key",
        (*RUN, "--server", "true"),
        {},
        2,
        r"Error: no model named and neither ANTHROPIC_API_KEY nor OPENAI_API_KEY is set; use --model one of ",
        True,
    ),
    (
        "anthropic-no-key",
        (*RUN, "--model", "anthropic:claude-sonnet-4-5", "--server", "true"),
        {},
        2,
        r"Error: no API key: set ANTHROPIC_API_KEY, or use a model that needs none: --model test .*"
        r"--model script:FILE .*"
        r"--base-url http://127.0.0.1:PORT/v1\)$",
        False,
    ),
    (
        "openai-no-key",
        (*RUN, "--model", "openai:gpt-4.1-mini", "--server", "true"),
        {},
        2,
        r"Error: no API key: set OPENAI_API_KEY, or use a model that needs none",
        False,
    ),
    # a stdio tool server
    (
        "no-such-program",
        (*RUN, *SCRIPTED, "--server", "no-such-program --stdio"),
        {},
        2,
        r"Error: Invalid value for '--server': 'no-such-program --stdio': the program 'no-such-program' is not on "
        r"PATH \(`toolwire run --help` lists the options\)$",
        True,
    ),
    (
        "exits-at-once",
        (*RUN, *SCRIPTED, "--server", "true"),
        {},
        1,
        r"Error: tool server `true` stopped before it answered MCP's initialize, with nothing on stderr; "
        r"a --server command must serve MCP on stdio, e.g. --server 'toolwire serve MODULE:ATTR --stdio'$",
        False,
    ),
    (
        "wrong-module-attr",
        (*RUN, *SCRIPTED, "--server", "toolwire serve nope:registry --stdio"),
        {},
        1,
        r"Error: tool server `\S*toolwire serve nope:registry --stdio` stopped before it answered MCP's initialize: "
        r"Error: cannot import 'nope': No module named 'nope' .*\(tool server output: \S+\.log\)$",
        False,
    ),
    (
        "server-fails-at-start",
        (*RUN, *SCRIPTED, "--server", f"{PY} -c \"raise SystemExit('tools: cannot open the orders database')\""),
        {},
        1,
        r"Error: tool server `.*` stopped before it answered MCP's initialize: "
        r"tools: cannot open the orders database \(tool server output: \S+\.log\)$",
        False,
    ),
    (
        "unbalanced-quote",
        (*RUN, *SCRIPTED, "--server", "toolwire serve 'tools:registry --stdio"),
        {},
        2,
        r"Error: Invalid value for '--server': .*No closing quotation",
        True,
    ),
    # names of tools the servers do not have: said once every server has listed its tools
    (
        "allow-matches-no-tool",
        (*RUN, *SCRIPTED, "--server", SUPPORT, "--allow", "get_order", "--allow", "get_ordr*"),
        {},
        2,
        r"Error: --allow 'get_ordr\*' matches no tool of this run "
        r"\(its tools: calculator, get_order, issue_refund, search_orders\)$",
        False,
    ),
    (
        "tool-choice-no-tool",
        (*RUN, *SCRIPTED, "--server", SUPPORT, "--tool-choice", "get_ordr"),
        {},
        2,
        r"Error: --tool-choice 'get_ordr' names no tool of this run \(its tools: .*\bget_order\b.*\)$",
        False,
    ),
    (
        "tool-choice-not-allowed",
        (*RUN, *SCRIPTED, "--server", SUPPORT, "--allow", "[cg]*", "--tool-choice", "issue_refund"),
        {},
        2,
        r"Error: --tool-choice 'issue_refund' names no tool of this run \(its tools: calculator, get_order\)$",
        False,
    ),
    # an HTTP tool server
    (
        "not-a-url",
        (*RUN, *SCRIPTED, "--server-url", "127.0.0.1:8000/mcp"),
        {},
        2,
        r"Error: Invalid value for '--server-url': '127.0.0.1:8000/mcp' is not an http:// or https:// URL",
        True,
    ),
    (
        "nothing-listening",
        (*RUN, *SCRIPTED, "--server-url", NOTHING_LISTENS),
        {},
        1,
        rf"Error: tool server `{NOTHING_LISTENS}` cannot be reached: connection refused; nothing answers there: "
        r"start it \(`toolwire serve MODULE:ATTR --http --port PORT`\) or fix --server-url$",
        False,
    ),
    (
        "unset-token-variable",
        (*RUN, *SCRIPTED, "--server-url", NOTHING_LISTENS, "--token-env", "NO_SUCH_TOKEN_VAR"),
        {},
        2,
        r"Error: Invalid value for '--token-env': the environment variable NO_SUCH_TOKEN_VAR is not set",
        True,
    ),
    # the limits: refused before the store is even opened
    *[
        (
            f"limit{flag}={value}",
            (*RUN, *SCRIPTED, "--server", "true", flag, value),
            {},
            2,
            rf"Error: Invalid value for '{flag}': {value}(\.0)? is not in the range {bound}\. \(`toolwire run --help`",
            True,
        )
        for flag, value, bound in [
            ("--max-steps", "-3", "x>=1"),
            ("--max-steps", "0", "x>=1"),
            ("--max-tokens", "-5", "x>=1"),
            ("--max-cost", "-1", "x>0"),
            ("--max-wall", "-0.5", "x>0"),
            ("--tool-timeout", "0", "x>0"),
        ]
    ],
    ("replay-repeat-limit-1", ("replay", "run_x", "--repeat-limit", "1"), {}, 2, r".*'--repeat-limit': 1 is not", True),
    # the run store
    (
        "db-unknown-scheme",
        (*RUN, *SCRIPTED, "--server", "true", "--db", "mysql://x/y"),
        {},
        2,
        r"Error: Invalid value for '--db': unknown run store 'mysql://': use a SQLite file path, sqlite:///PATH, "
        r"or a postgresql:// \(or postgres://\) URL \(`toolwire run --help` lists the options\)$",
        True,
    ),
    # unknown run ids
    ("resume-unknown", ("resume", "run_does_not_exist"), {}, 1, UNKNOWN_RUN, False),
    ("replay-unknown", ("replay", "run_does_not_exist"), {}, 1, UNKNOWN_RUN, False),
    ("trace-show-unknown", ("trace", "show", "run_does_not_exist"), {}, 1, UNKNOWN_RUN, False),
    ("trace-export-unknown", ("trace", "export", "run_does_not_exist"), {}, 1, UNKNOWN_RUN, False),
    ("approve-unknown", ("approve", "run_does_not_exist"), {}, 1, UNKNOWN_RUN, False),
    ("reject-unknown", ("reject", "run_does_not_exist", "--reason", "no"), {}, 1, UNKNOWN_RUN, False),
    # the tool server's own command, and a mistyped command
    (
        "serve-no-module",
        ("serve", "no_such_module:registry", "--stdio"),
        {},
        1,
        r"Error: cannot import 'no_such_module': No module named 'no_such_module'",
        True,
    ),
    ("no-such-command", ("rnu", "x"), {}, 2, r"Error: No such command 'rnu'\.", True),
]


async def _empty_store(db: str) -> None:
    await (await open_store(db)).aclose()


def _check(args: tuple[str, ...], env: dict[str, str], code: int, first: str) -> str:
    done = run_toolwire(*args, env=env)
    out = done.stdout + done.stderr
    assert "Traceback" not in out and "Exception Group" not in out, out
    assert done.returncode == code, out
    first_line = out.strip().splitlines()[0]
    assert re.match(first, first_line), first_line
    return out


@pytest.mark.parametrize(
    ("args", "extra", "code", "first", "nothing_saved"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_a_mistake_is_one_line_and_an_exit_status(
    args: tuple[str, ...], extra: dict[str, str], code: int, first: str, nothing_saved: bool, tmp_path: Path
) -> None:
    db = tmp_path / "runs.db"
    env = clean_env(TOOLWIRE_DB=str(db), TOOLWIRE_LOG_DIR=str(tmp_path / "logs"), **extra)
    if not nothing_saved:  # a store to look the run up in: the commands about saved runs make none
        anyio.run(_empty_store, str(db))
    _check(args, env, code, first)
    if nothing_saved:
        assert not db.exists()  # refused while the command line was read: the store was not even opened
    elif db.exists():
        assert run_toolwire("runs", "--json", env=env).stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("path", "token", "first"),
    [
        (
            "",
            "tok-a",
            r"Error: tool server `http://127.0.0.1:\d+` refused MCP's initialize: HTTP 404 Not Found; "
            r"`toolwire serve --http` answers MCP at /mcp: --server-url http://127.0.0.1:\d+/mcp$",
        ),
        (
            "/mcp",
            None,
            r"Error: tool server `http://127.0.0.1:\d+/mcp` refused MCP's initialize: HTTP 401 Unauthorized; "
            r"pass the agent's bearer token: --token-env VAR, with VAR holding the token$",
        ),
        (
            "/mcp",
            "not-a-token-it-knows",
            r"Error: tool server `http://127.0.0.1:\d+/mcp` refused MCP's initialize: HTTP 401 Unauthorized\S*.*; "
            r"the server did not recognise the bearer token sent \(--token-env\): check that the variable holds the "
            r"token the server's access config gives this agent$",
        ),
    ],
    ids=["url-without-mcp", "no-token", "wrong-token"],
)
def test_an_http_server_that_refuses_says_what_to_fix(
    http_server: HttpServer, path: str, token: str | None, first: str, tmp_path: Path
) -> None:
    env = clean_env(TOOLWIRE_DB=str(tmp_path / "runs.db"), **({"TOKEN": token} if token else {}))
    token_args = ("--token-env", "TOKEN") if token else ()
    _check((*RUN, *SCRIPTED, "--server-url", http_server.base + path, *token_args), env, 1, first)


def test_toolwire_debug_shows_the_traceback(tmp_path: Path) -> None:
    env = clean_env(TOOLWIRE_DB=str(tmp_path / "runs.db"), TOOLWIRE_DEBUG="1")
    done = run_toolwire(*RUN, "--model", "scripted:nope", "--server", "true", env=env)
    assert done.returncode == 1 and "Traceback" in done.stderr
    assert "UnknownModel: unknown model 'scripted:nope'" in done.stderr
