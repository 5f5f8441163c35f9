"""The one `toolwire` command. Each sub-command lives in its own module and registers itself here."""

from importlib import import_module

import click

from toolwire_client.mistakes import ToolwireGroup, one_line_logs


@click.group(cls=ToolwireGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="toolwire")
def main() -> None:
    """Run LLM agents on real tools over MCP."""
    one_line_logs()


COMMANDS = [
    ("toolwire_server.cli", "serve"),
    ("toolwire_client.cli.eval", "eval_command"),
    ("toolwire_client.cli.runs", "runs"),
    ("toolwire_client.cli.runs", "resume"),
    ("toolwire_client.cli.approvals", "approvals"),
    ("toolwire_client.cli.approvals", "approve"),
    ("toolwire_client.cli.approvals", "reject"),
    ("toolwire_client.cli.answer", "answer_command"),
    ("toolwire_client.cli.ui", "ui"),
    ("toolwire_client.cli.trace", "trace"),
    ("toolwire_client.cli.audit", "audit"),
    ("toolwire_client.cli.replay", "replay_command"),
    ("toolwire_client.cli.run", "run"),
    ("toolwire_client.cli.demo", "demo"),
    ("toolwire_client.cli.fleet", "worker"),
    ("toolwire_client.cli.fleet", "submit"),
    ("toolwire_client.cli.fleet", "wait"),
]
"""(module, click command) of every sub-command, in the order `toolwire --help` lists them."""


def _register() -> None:
    """Sub-commands are imported here, not at the top, so the group itself loads nothing else."""
    for module, name in COMMANDS:
        main.add_command(getattr(import_module(module), name))


_register()
