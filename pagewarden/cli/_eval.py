"""`pagewarden eval …`: conformance evaluations on public benchmarks."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.markup import escape

from pagewarden.cli._base import (
    _error,
    console,
    main,
)


@main.group("eval")
def eval_group() -> None:
    """Evaluate the guard against benchmarks."""


@eval_group.command("stwebagentbench")
@click.option(
    "--data",
    "paths",
    multiple=True,
    required=True,
    type=click.Path(path_type=Path),
    help="An ST-WebAgentBench task file (test.raw.json); repeat for several releases.",
)
@click.option(
    "--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), help="Write the report as JSON."
)
def eval_stwebagentbench(paths: tuple[Path, ...], json_out: Path | None) -> None:
    """Conformance of the rules tier with the benchmark's own evaluators.

    For every policy whose outcome the action trace decides, violating and compliant steps
    are generated, labelled by an independent re-implementation of the benchmark's
    evaluators and judged by a fresh guard. Prints detection and false-block rates per
    category. Exit 1 when a miss has no documented explanation.
    """
    from pagewarden.eval.stwebagentbench import evaluate_file, render, write_json
    from pagewarden.policies.importers import DatasetError

    reports = []
    for path in paths:
        try:
            with console.status(f"evaluating {path.name}") as status:

                def progress(done: int, total: int, status=status, name=path.name) -> None:
                    status.update(f"evaluating {name}: task {done}/{total}")

                reports.append(evaluate_file(path, progress=progress))
        except DatasetError as exc:
            _error(exc)
            sys.exit(1)
        render(reports[-1], console)
    if json_out is not None:
        try:
            write_json(reports, json_out)
        except OSError as exc:
            _error(f"cannot write {json_out}: {exc}")
            sys.exit(1)
        console.print(f"[green]wrote[/green] {escape(str(json_out))}", highlight=False)
    if any(report.unexplained for report in reports):
        sys.exit(1)
