"""The one `toolwire` command. Each sub-command lives in its own module and registers itself here."""

import click

from toolwire_client.mistakes import ToolwireGroup, one_line_logs


@click.group(cls=ToolwireGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="toolwire")
def main() -> None:
    """Run LLM agents on real tools over MCP."""
    one_line_logs()


def _register() -> None:
    # Imported here so `toolwire --help` stays fast and one broken sub-command cannot hide the others.
    from toolwire_server.cli import serve

    main.add_command(serve)
    from toolwire_client.cli import eval as eval_cli

    main.add_command(eval_cli.eval_command)

    from toolwire_client.cli import approvals, replay, runs, trace

    main.add_command(runs.runs)
    main.add_command(runs.resume)
    main.add_command(approvals.approvals)
    main.add_command(approvals.approve)
    main.add_command(approvals.reject)
    main.add_command(trace.trace)
    main.add_command(replay.replay_command)

    from toolwire_client.cli import demo, run

    main.add_command(run.run)
    main.add_command(demo.demo)

    from toolwire_client.cli import fleet

    main.add_command(fleet.worker)
    main.add_command(fleet.submit)
    main.add_command(fleet.wait)


_register()
