"""The one `toolwire` command. Each sub-command lives in its own module and registers itself here."""

from importlib import import_module

import click

from toolwire_client._version import __version__
from toolwire_client.cli.help_pages import stored_page
from toolwire_client.cli.summaries import SUMMARIES
from toolwire_client.mistakes import ToolwireGroup, one_line_logs

_LISTING = "toolwire.listing"


class _Subcommands(ToolwireGroup):
    """Imports a sub-command's module only when that command is asked for: `toolwire runs` or `approve` does not
    load the tool server and the MCP client (about 0.4 s of every such call)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        ctx.meta[_LISTING] = True  # the command list shows each command's summary without importing it
        super().format_help(ctx, formatter)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if not ctx.meta.get(_LISTING) and (page := stored_page(args)) is not None:
            click.echo(page, nl=False)  # `COMMAND --help`, answered without importing COMMAND (help_pages.py)
            ctx.exit(0)
        return super().resolve_command(ctx, args)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        where = COMMANDS.get(cmd_name)
        if where is None:
            return None
        if ctx.meta.get(_LISTING):
            return click.Command(cmd_name, help=SUMMARIES[cmd_name])
        command: click.Command = getattr(import_module(where[0]), where[1])
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """`--help` lists the commands by purpose (GROUPS), each with its one line."""
        grouped = {name for names in GROUPS.values() for name in names}
        sections = [*GROUPS.items(), ("Other", tuple(sorted(set(COMMANDS) - grouped)))]
        limit = formatter.width - 6 - max(map(len, COMMANDS))
        for title, names in sections:
            rows = []
            for name in names:
                command = self.get_command(ctx, name)
                if command is not None and not command.hidden:
                    rows.append((name, command.get_short_help_str(limit)))
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


@click.group(cls=_Subcommands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, package_name="toolwire")
def main() -> None:
    """Run LLM agents on real tools over MCP."""
    one_line_logs()


COMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("toolwire_server.cli", "serve"),
    "check": ("toolwire_server.cli", "check"),
    "dev": ("toolwire_server.dev", "dev"),
    "eval": ("toolwire_client.cli.eval", "eval_command"),
    "runs": ("toolwire_client.cli.runs", "runs"),
    "resume": ("toolwire_client.cli.resume", "resume"),
    "approvals": ("toolwire_client.cli.approvals", "approvals"),
    "approve": ("toolwire_client.cli.approvals", "approve"),
    "reject": ("toolwire_client.cli.approvals", "reject"),
    "answer": ("toolwire_client.cli.answer", "answer_command"),
    "ui": ("toolwire_client.cli.ui", "ui"),
    "trace": ("toolwire_client.cli.trace", "trace"),
    "audit": ("toolwire_client.cli.audit", "audit"),
    "replay": ("toolwire_client.cli.replay", "replay_command"),
    "run": ("toolwire_client.cli.run", "run"),
    "tools": ("toolwire_client.cli.tools", "tools_command"),
    "call": ("toolwire_client.cli.tools", "call_command"),
    "demo": ("toolwire_client.cli.demo", "demo"),
    "agent": ("toolwire_client.cli.agent", "agent"),
    "worker": ("toolwire_client.cli.fleet", "worker"),
    "submit": ("toolwire_client.cli.fleet", "submit"),
    "wait": ("toolwire_client.cli.wait", "wait"),
}
"""Every sub-command: its name, and the module and click command that implement it (imported when asked for)."""

GROUPS: dict[str, tuple[str, ...]] = {
    "Run agents": ("run", "demo", "eval", "tools", "call"),
    "Serve tools": ("serve", "dev", "check"),
    "Serve agents": ("agent",),
    "Runs and decisions": (
        "runs",
        "trace",
        "audit",
        "replay",
        "approvals",
        "approve",
        "reject",
        "answer",
        "resume",
        "ui",
    ),
    "Fleet": ("worker", "submit", "wait"),
}
"""`toolwire --help`'s sections, by what a command is for; a command in none is listed under Other."""
