"""`pagewarden eval …`: conformance evaluations on public benchmarks, and the judge evaluation."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.markup import escape

from pagewarden.cli._base import (
    _bad_input,
    _error,
    _llm_config,
    _llm_options,
    console,
    err_console,
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


@eval_group.command("judge")
@click.argument("dataset", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(["jsonl", "mind2web-sc", "stwebagentbench"]), default="jsonl",
    show_default=True,
    help="DATASET's format: labelled items (JSONL), Mind2Web-SC's sample_labeled_all.json, or an "
    "ST-WebAgentBench task file (converted to labelled items).",
)  # fmt: skip
@_llm_options
@click.option(
    "--tiers", type=click.Choice(["semantic", "all"]), default="semantic", show_default=True,
    help="semantic: the model alone, consulted on every item (the policies' rules left out); "
    "all: the guard as deployed (rules, static world model, the model where the cascade consults it).",
)  # fmt: skip
@click.option(
    "-p", "--policies", "policy_files", multiple=True, type=click.Path(path_type=Path),
    help="A policy file whose policies are added to every item's own; repeat for several.",
)  # fmt: skip
@click.option("--deadline", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Seconds one item's consultation may take, retries included.")  # fmt: skip
@click.option("--split", is_flag=True, help="World model and utility agent as two calls instead of one.")
@click.option("--limit", type=click.IntRange(min=1), help="Judge only the first N items.")
@click.option(
    "--sample", "sample_size", type=click.IntRange(min=1),
    help="Judge N items drawn at random (in file order; the same N with the same --seed), e.g. from "
    "a large converted set.",
)  # fmt: skip
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --sample.")
@click.option(
    "--json", "json_out", type=click.Path(dir_okay=False, path_type=Path),
    help="Write the report, with every item's result, as JSON.",
)  # fmt: skip
@click.option(
    "--convert", "convert_out", type=click.Path(dir_okay=False, path_type=Path),
    help="Write DATASET's items as labelled JSONL to this file and stop (no model needed).",
)  # fmt: skip
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
def eval_judge(
    dataset: Path | None,
    fmt: str,
    llm_base_url: str | None,
    llm_model: str | None,
    llm_config: Path | None,
    tiers: str,
    policy_files: tuple[Path, ...],
    deadline: float,
    split: bool,
    limit: int | None,
    sample_size: int | None,
    seed: int,
    json_out: Path | None,
    convert_out: Path | None,
    quiet: bool,
) -> None:
    """Score a model as the guard's judge on labelled actions.

    Every item of DATASET (default: the sample set shipped with pagewarden) is judged through
    the semantic tier — world model and utility agent, as the guard consults them — against the
    model given with --llm-base-url/--llm-model/--llm-config or PAGEWARDEN_LLM_*. Prints
    precision and recall per label (allow, ask, block), missed violations, false blocks,
    latency p50/p95, tokens and model calls per item. A model that fails or hangs leaves an
    item with the guard's safe decision (block), counted as a failure, and the run goes on. The
    labelled-items format is in docs/reference/formats.md. Exit 0 after a run (items that
    failed are reported, not an error); 1 when the model server cannot be reached (checked
    first, with GET /models, and again when every item failed); 2 on bad input.
    """
    import asyncio

    from pagewarden.eval.judge import (
        ItemFormatError,
        JudgeOptions,
        read_dataset,
        render,
        run_items,
        sample_path,
        summarise,
        write_items,
        write_json,
    )
    from pagewarden.policies import PolicySet

    source = dataset or sample_path()
    try:
        items = read_dataset(source, fmt if dataset is not None else "jsonl")
        extra = tuple(PolicySet.combine(policy_files)) if policy_files else ()
    except (ItemFormatError, ValueError, OSError) as exc:
        _bad_input(source, exc)
    if sample_size is not None and sample_size < len(items):
        import random

        chosen = set(random.Random(seed).sample(range(len(items)), sample_size))
        items = [item for index, item in enumerate(items) if index in chosen]
    if limit is not None:
        items = items[:limit]
    if convert_out is not None:
        try:
            count = write_items(items, convert_out)
        except OSError as exc:
            _error(f"cannot write {convert_out}: {exc}")
            sys.exit(2)
        console.print(
            f"[green]wrote[/green] {count} labelled item(s) to {escape(str(convert_out))}", highlight=False
        )
        return
    config = _llm_config(llm_base_url, llm_model, llm_config)
    if config is None:
        _error(
            "a model is needed: --llm-base-url and --llm-model, --llm-config, "
            "or PAGEWARDEN_LLM_* in the environment"
        )
        sys.exit(2)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from pagewarden.llm import LLMClient, LLMUnavailable

    options = JudgeOptions(tiers=tiers, deadline=deadline, split=split, policies=extra)  # type: ignore[arg-type]
    client = LLMClient(config)
    probe = min(config.timeout, 15.0)
    try:
        client.probe_sync(timeout=probe)
    except LLMUnavailable as exc:
        client.close()
        _error(f"the model server cannot be reached: {exc.reason}. Nothing was judged.")
        sys.exit(1)
    show = not quiet and err_console.is_terminal
    gone: str | None = None  # why the server could not be reached after every item failed
    try:
        with Progress(
            TextColumn("judging"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TextColumn("{task.description}"), console=err_console, disable=not show, transient=True,
        ) as bar:  # fmt: skip
            task = bar.add_task("", total=len(items))

            def progress(done: int, total: int, result) -> None:
                mark = "ok" if result.correct else f"{result.label}→{result.decision}"
                bar.update(task, completed=done, description=f"{result.id[:40]} {mark}")

            results = asyncio.run(run_items(items, client, options, progress=progress))
        if results and all(result.failed for result in results):
            try:  # every item failed: the model, or a server that went away during the run?
                client.probe_sync(timeout=probe)
            except LLMUnavailable as exc:
                gone = exc.reason
    finally:
        client.close()
    report = summarise(results, dataset=str(source), model=config.model, tiers=tiers)
    render(report, console)
    if json_out is not None:
        try:
            write_json(report, json_out)
        except OSError as exc:
            _error(f"cannot write {json_out}: {exc}")
            sys.exit(2)
        console.print(f"[green]wrote[/green] {escape(str(json_out))}", highlight=False)
    if gone is not None:
        _error(f"the model server went away during the run: {gone}. Every item failed.")
        sys.exit(1)
