"""The one place a mistake becomes one readable line and an exit code (EXIT_CODES: the same for every command, and
the README's table). A traceback only with TOOLWIRE_DEBUG=1, for errors and for log records alike."""

import logging
import os
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # imported where a mistake is explained: the `toolwire` group loads this module on every start
    from toolwire_client.models import MissingApiKey
    from toolwire_client.tools.source import ToolServerFailed

DEBUG_ENV = "TOOLWIRE_DEBUG"
DONE, FAILED, USAGE, CLAIMED, WAITING, TIMED_OUT, INTERRUPTED = 0, 1, 2, 3, 4, 5, 130
EXIT_CODES = (
    (DONE, "done: the run finished with an answer, or the command did what it was asked"),
    (FAILED, "failed: the run stopped (a limit, an error) or failed, or the command could not do it"),
    (USAGE, "usage: the command line names something that does not exist or is out of range"),
    (CLAIMED, "claimed: another process drives the run right now"),
    (WAITING, "waiting for a person: an approval or an answer (`toolwire approvals` lists it)"),
    (TIMED_OUT, "timed out: `wait --timeout` gave up; the run goes on"),
    (
        INTERRUPTED,
        "interrupted (Ctrl-C); a run that `run` or `resume` drove is saved as it was: `toolwire resume RUN_ID` goes on",
    ),
)
"""Every exit status of every `toolwire` command, and what it means."""


def run_exit(status: str) -> int:
    """The exit status of `run`, `resume` and `wait` for a run that is now in `status`."""
    return {"done": DONE, "waiting_for_approval": WAITING}.get(status, FAILED)


def debugging() -> bool:
    return os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no")


class Mistake(click.ClickException):
    """Printed as `Error: LINE`; a run or a command that failed: exit status 1. The line may quote a server or a
    model (what a tool server said as it failed), so it is shown inert."""

    exit_code = FAILED

    def format_message(self) -> str:
        from toolwire_shared.terminal import shown

        return shown(self.message)


class UsageMistake(Mistake):
    """The command line names something that does not exist or is out of range: exit status 2."""

    exit_code = USAGE


class ClaimedMistake(Mistake):
    """Another process holds the run: exit status 3."""

    exit_code = CLAIMED


def mistake(line: str, exit_code: int = FAILED) -> Mistake:
    kind = {USAGE: UsageMistake, CLAIMED: ClaimedMistake}.get(exit_code, Mistake)
    return kind(line)


class ToolwireGroup(click.Group):
    """The `toolwire` group: every error of a sub-command leaves as one line (see `explain`)."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            if debugging():
                raise
            raise one_line_usage(exc) from exc
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except KeyboardInterrupt:  # Ctrl-C: the status of the table, not click's `Aborted!` and 1
            click.echo("interrupted", err=True)
            raise click.exceptions.Exit(INTERRUPTED) from None
        except Exception as exc:
            if debugging():
                raise
            raise explain(exc) from exc


def one_line_usage(exc: click.UsageError) -> Mistake:
    """click's usage error without the usage block around it: the line, and where the help is."""
    where = f" (`{exc.ctx.command_path} --help` lists the options)" if exc.ctx is not None else ""
    return UsageMistake(exc.format_message() + where)


def explain(exc: BaseException) -> click.ClickException:
    """The line and exit code for `exc` (or, in an exception group, for the first of its errors that says most)."""
    leaves = _leaves(exc)
    known = [leaf for leaf in leaves if isinstance(leaf, _typed())]
    leaf = (known or leaves or [exc])[0]
    if isinstance(leaf, click.UsageError):
        return one_line_usage(leaf)
    if isinstance(leaf, click.ClickException):
        return leaf
    line, exit_code = _explain(leaf)
    notes = [_flat(note) for note in getattr(leaf, "__notes__", ())]
    return mistake(line + (f" ({'; '.join(notes)})" if notes else ""), exit_code)


def _explain(leaf: BaseException) -> tuple[str, int]:
    import sqlite3

    import psycopg
    import pydantic

    from toolwire_client.models import MissingApiKey, UnknownModel
    from toolwire_client.store import ApprovalRefused, RunAlreadyClaimed, RunNotFound, StaleRunState, StoreMissing
    from toolwire_client.tools.source import ToolServerFailed
    from toolwire_client.tools.tool_layers import NoSuchTool

    if isinstance(leaf, UnknownModel):
        return str(leaf), USAGE
    if isinstance(leaf, MissingApiKey):
        return _no_key(leaf), USAGE
    if isinstance(leaf, NoSuchTool):
        return str(leaf), USAGE
    if isinstance(leaf, ToolServerFailed):
        return server_failed(leaf), USAGE if leaf.kind == "no_command" else FAILED
    if isinstance(leaf, RunAlreadyClaimed):
        return f"{leaf} (`toolwire runs` shows its status)", CLAIMED
    if isinstance(leaf, StaleRunState):
        return f"{leaf}; nothing of ours was saved over it", FAILED
    if isinstance(leaf, RunNotFound | ApprovalRefused | StoreMissing):
        return str(leaf), FAILED
    if isinstance(leaf, pydantic.ValidationError):
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in leaf.errors())
        return f"invalid {leaf.title}: {problems}", FAILED
    if isinstance(leaf, sqlite3.Error | psycopg.Error):
        return f"the run store failed: {_flat(str(leaf)) or type(leaf).__name__} (--db or $TOOLWIRE_DB)", FAILED
    if isinstance(leaf, ValueError | OSError):
        return _flat(str(leaf)) or type(leaf).__name__, FAILED
    bug = f"unexpected {type(leaf).__name__}: {_flat(str(leaf))} - a bug in toolwire; run again with {DEBUG_ENV}=1"
    return bug + " for the traceback", FAILED


def _typed() -> tuple[type[BaseException], ...]:
    """In an exception group, one of these says more than whatever else went wrong with it."""
    from toolwire_client.models import MissingApiKey, UnknownModel
    from toolwire_client.store import ApprovalRefused, RunAlreadyClaimed, RunNotFound, StaleRunState, StoreMissing
    from toolwire_client.tools.source import ToolServerFailed
    from toolwire_client.tools.tool_layers import NoSuchTool

    return (
        click.ClickException,
        UnknownModel,
        MissingApiKey,
        ToolServerFailed,
        NoSuchTool,
        RunAlreadyClaimed,
        StaleRunState,
        RunNotFound,
        ApprovalRefused,
        StoreMissing,
    )


def _no_key(exc: "MissingApiKey") -> str:
    if exc.env_var is None:  # default_spec(): no model named at all
        return str(exc)
    return (
        f"no API key: set {exc.env_var}, or use a model that needs none: --model test (each of your tools called "
        "once, no network), --model script:FILE (the turns you write), or a local OpenAI-compatible server "
        "(--model openai:NAME --base-url http://127.0.0.1:PORT/v1)"
    )


def server_failed(exc: "ToolServerFailed") -> str:
    """A tool server that would not start or answer: what was tried, what it said, what to fix."""
    said = f": {exc.said}" if exc.said else ""
    line = f"tool server `{exc.target}` {exc.reason}{said}"
    hint = {
        "no_command": "check the --server command: is the program installed and on PATH?",
        "exited": "" if exc.said else _STDIO_HINT,
        "dropped": "",
        "list_failed": "",
        "timeout": _SLOW_HINT if exc.said else f"it wrote nothing on stderr in that time; {_STDIO_HINT}",
        "unreachable": "nothing answers there: start it (`toolwire serve MODULE:ATTR --http --port PORT`)"
        " or fix --server-url",
        "refused": "pass the agent's bearer token: --token-env VAR, with VAR holding the token",
        "token_refused": "the server did not recognise the bearer token sent (--token-env): check that the variable "
        "holds the token the server's access config gives this agent",
        "not_found": _not_found_hint(exc.target),
        "failed": "",
    }[exc.kind]
    return line + (f"; {hint}" if hint else "")


_STDIO_HINT = "a --server command must serve MCP on stdio, e.g. --server 'toolwire serve MODULE:ATTR --stdio'"
_SLOW_HINT = (
    "its last line on stderr is quoted; a command that fetches its server first (npx, uvx) waits on the network: "
    "run it once by hand to see it start"
)


def _not_found_hint(url: str) -> str:
    from urllib.parse import urlsplit

    path = urlsplit(url).path.rstrip("/")
    if not path.endswith("/mcp"):
        return f"`toolwire serve --http` answers MCP at /mcp: --server-url {url.rstrip('/')}/mcp"
    return "no MCP endpoint at this path; `toolwire serve --http` answers at /mcp on its --host and --port"


def _leaves(exc: BaseException) -> list[BaseException]:
    """The errors of an exception group (the MCP kit's `leaves`), a cancellation none of them."""
    import asyncio

    from toolwire_shared.mcp_kit.groups import leaves

    return [leaf for leaf in leaves(exc) if not isinstance(leaf, asyncio.CancelledError)]


def _flat(text: str) -> str:
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


class OneLineLogs(logging.Handler):
    """The handler Python uses when nothing else is set up (`logging.lastResort`): `warning: MESSAGE` on stderr,
    one line, without the traceback a library logged with it unless TOOLWIRE_DEBUG=1."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        from toolwire_shared.terminal import shown

        try:
            text = shown(f"{record.levelname.lower()}: {_flat(record.getMessage())}")
            if debugging() and record.exc_info:
                text += "\n" + logging.Formatter().formatException(record.exc_info)
            click.echo(text, err=True)
        except Exception:
            self.handleError(record)


def one_line_logs() -> None:
    """Library log records (the SDK's, OpenTelemetry's, ours) as single lines; `toolwire serve` still configures
    its own handler, which takes over from this one."""
    logging.lastResort = OneLineLogs()
