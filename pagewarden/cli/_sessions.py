"""`pagewarden report` and `pagewarden eval wasp` (issue 10), registered on the main group."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from pagewarden.cli._base import _bad_input, _llm_config, _llm_options, console, main
from pagewarden.cli._eval import eval_group


@eval_group.command("wasp")
@click.option(
    "--data", "data", required=True, type=click.Path(path_type=Path),
    help="WASP's data directory (injection_templates_and_user_goals.json, attacks_in_webarena_format.jsonl); "
    "it is read from there, never copied.",
)  # fmt: skip
@click.option("--limit", type=int, help="Only the first N attacker goals (each: 4 templates × 2 user goals).")
@click.option(
    "--config", "configs", multiple=True, type=click.Choice(["none", "embedded", "network", "semantic"]),
    help="Configurations to run (repeatable; default: none, embedded, network, and semantic with a model).",
)  # fmt: skip
@_llm_options
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), help="Report as JSON.")
@click.option("--html", "html_out", type=click.Path(dir_okay=False, path_type=Path), help="HTML report.")
def eval_wasp(
    data: Path,
    limit: int | None,
    configs: tuple[str, ...],
    llm_base_url: str | None,
    llm_model: str | None,
    llm_config: Path | None,
    json_out: Path | None,
    html_out: Path | None,
) -> None:
    """WASP's GitLab prompt injections on a local GitLab-like site: PCR, CuP and ASR per
    configuration (every attacker goal × injection template × user goal in the data).

    A follower agent falls for every injection (and returns to the user's task when the
    guard stops it); a benign agent does the user's task on the same page. Exit 2 on bad data.
    """
    import asyncio

    from pagewarden.eval.wasp import (
        Configuration,
        WaspDataError,
        load_tasks,
        render_table,
        run_wasp,
        write_html,
        write_json,
    )
    from pagewarden.guard import Guard

    try:
        tasks = load_tasks(data, limit=limit)
    except WaspDataError as exc:
        _bad_input(data, exc)
    llm = _llm_config(llm_base_url, llm_model, llm_config)
    chosen = list(configs) or ["none", "embedded", "network", *(["semantic"] if llm is not None else [])]
    if "semantic" in chosen and llm is None:
        raise click.UsageError("--config semantic needs a model (--llm-base-url, --llm-model)")
    factories = {
        "none": Configuration(None),
        "embedded": Configuration(lambda task: Guard(goal=task.user_goal)),
        "network": Configuration(lambda task: Guard(goal=task.user_goal), network=True),
        "semantic": Configuration(lambda task: Guard(goal=task.user_goal, llm=llm)),
    }
    with console.status("WASP") as status:

        def progress(done: int, total: int) -> None:
            status.update(f"WASP: episode {done}/{total}")

        report = asyncio.run(
            run_wasp(tasks, {name: factories[name] for name in chosen}, data=str(data), progress=progress)
        )
    render_table(report, console)
    try:
        if json_out is not None:
            write_json(report, json_out)
            console.print(f"[green]wrote[/green] {escape(str(json_out))}", highlight=False)
        if html_out is not None:
            write_html(report, html_out)
            console.print(f"[green]wrote[/green] {escape(str(html_out))}", highlight=False)
    except OSError as exc:
        _bad_input(json_out or html_out, exc)


@main.command("report")
@click.argument("source", type=click.Path(path_type=Path))
@click.option(
    "-o", "--out", "out", type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the page (default: report.html in the recorded directory, or next to the trace).",
)  # fmt: skip
def report_command(source: Path, out: Path | None) -> None:
    """Render the HTML report of a recorded session: SOURCE is a directory written by
    Guard(record=…) (or one holding a trace.jsonl) or a trace file. Exit 2 on bad input."""
    from pagewarden.replay import load_session, read_records
    from pagewarden.trace import SessionFormatError, render_session_report

    try:
        if source.is_dir():
            session = load_session(source)
            records, manifest, base = session.records, session.manifest, source
        else:
            records, manifest, base = read_records(source), {}, source.parent
        if not records:
            raise SessionFormatError(f"{source}: no recorded steps")
    except (OSError, ValueError) as exc:
        _bad_input(source, exc)
    target = out or base / "report.html"
    page = render_session_report(
        records, title=source.name or str(source), manifest=manifest, base=base, out_dir=target.parent
    )
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page, encoding="utf-8")
    except OSError as exc:
        _bad_input(target, exc)
    console.print(f"[green]wrote[/green] {escape(str(target))} ({len(records)} steps)", highlight=False)
