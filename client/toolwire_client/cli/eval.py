"""`toolwire eval FILE`: run an eval set, show progress, print the table, gate CI on the success rate."""

import json
import sys
from pathlib import Path

import click

from toolwire_client.cli._json import json_option, printing_json
from toolwire_client.cli._store import db_option


class BadInput(click.ClickException):
    """Exit status 2, so CI can tell a broken eval file from a success rate below --min-success (status 1)."""

    exit_code = 2


@click.command(name="eval")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--repeat", default=1, show_default=True, type=click.IntRange(min=1), help="Run every task N times.")
@click.option("--concurrency", default=1, show_default=True, type=click.IntRange(min=1), help="How many runs at once.")
@click.option(
    "--report",
    "report_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every figure and every attempt as JSON to this file ('-' for stdout).",
)
@json_option("Print every figure and every attempt as JSON on stdout (the table on stderr).", old_value="--report")
@click.option(
    "--min-success",
    type=click.FloatRange(0.0, 1.0),
    help="Exit with status 1 when the overall success rate is below this (e.g. 0.9).",
)
@db_option
@click.option("--no-save", is_flag=True, help="Do not save failed runs.")
@click.option(
    "--prices",
    "prices_file",
    type=click.Path(exists=True, dir_okay=False),
    help="TOML price file overriding the shipped table (also $TOOLWIRE_PRICES).",
)
def eval_command(
    file: Path,
    repeat: int,
    concurrency: int,
    report_file: Path | None,
    as_json: str | None,
    min_success: float | None,
    db: str | None,
    no_save: bool,
    prices_file: str | None,
) -> None:
    """Run the tasks in FILE (TOML or JSON) and judge the answers and the paths.

    Failed runs are saved in the run store (--db) so `toolwire replay RUN` reproduces them.
    """
    import anyio
    from rich.console import Console
    from rich.text import Text

    from toolwire_client.evals import report
    from toolwire_client.evals.progress import LiveProgress
    from toolwire_client.evals.runner import Attempt, EvalRunner
    from toolwire_client.evals.spec import EvalFileError, load_eval_file
    from toolwire_client.models.pricing import PriceFileError, load_prices
    from toolwire_shared.terminal import inert

    print_json, old_report = printing_json(as_json, "--report")
    if old_report is not None and report_file is not None:
        raise BadInput("give the report file once: --report FILE")
    json_out = Path(old_report) if old_report is not None else report_file
    try:
        evals = load_eval_file(file)
        prices = load_prices(prices_file)
    except (EvalFileError, PriceFileError) as exc:
        raise BadInput(str(exc)) from exc
    console = Console(stderr=True)
    total = len(evals.tasks) * repeat

    async def main() -> list[Attempt]:
        from toolwire_client.store import open_store

        store = None if no_save else await open_store(db)
        try:
            with LiveProgress(console, total) as progress:
                runner = EvalRunner(evals, store=store, prices=prices, on_attempt=progress.add)
                return await runner.run(repeat=repeat, concurrency=concurrency)
        finally:
            if store is not None:
                await store.aclose()

    attempts = anyio.run(main)
    piped = not (sys.stderr if print_json else sys.stdout).isatty()
    out = Console(stderr=print_json, width=1000 if piped else None)  # piped: whole columns, not `succe…`
    out.print(report.table(attempts))
    for line in report.failures(attempts):
        out.print(Text.assemble(("✗", "red"), " ", inert(line)))
    data = report.as_json(attempts, threshold=min_success)
    text = json.dumps(data, indent=2, default=str)
    if print_json:
        sys.stdout.write(text + "\n")
    if json_out is not None:
        if str(json_out) == "-":
            sys.stdout.write(text + "\n")
        else:
            json_out.write_text(text + "\n", encoding="utf-8")
    rate = data["total"]["success_rate"]
    if min_success is not None and rate < min_success:
        console.print(f"[red]success rate {rate:.0%} is below --min-success {min_success:.0%}[/red]")
        sys.exit(1)
