"""`pagewarden policies extract …` (and, later, `policies store …`): the policy agent's CLI.

Registered on the `policies` group of `pagewarden.cli` when that module is imported.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import click
import yaml

from pagewarden.cli import _llm_config, _llm_options, console, err_console, policies
from pagewarden.policies import PolicyError, PolicySet

#: a document with at least this many pages or statements gets a progress bar
_LONG = 20


class _Bar:
    """A progress bar per long source (on stderr; gone when done)."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=err_console, transient=True,
        )  # fmt: skip
        self.tasks: dict[str, int] = {}

    def __call__(self, name: str, done: int, total: int) -> None:
        if total < _LONG:
            return
        if name not in self.tasks:
            self.progress.start()
            self.tasks[name] = self.progress.add_task(Path(name).name[:40], total=total)
        self.progress.update(self.tasks[name], completed=done, total=total)

    def stop(self) -> None:
        self.progress.stop()


def _print_report(result, out: Path | None) -> None:
    for document in result.documents:
        size = f"{document.pages} pages" if document.pages else f"{len(document.blocks)} blocks"
        err_console.print(f"read {document.name} ({document.kind}, {size})", highlight=False)
    for warning in result.warnings:
        err_console.print(f"[yellow]warning[/yellow] {warning}", highlight=False)
    for error in result.errors:
        err_console.print(f"[red]error[/red] {error}", highlight=False, soft_wrap=True)
    for passage in result.hostile:
        err_console.print(
            f"[yellow]ignored[/yellow] text addressed to the extractor, not obeyed: {passage}",
            highlight=False, soft_wrap=True,
        )  # fmt: skip
    for rejected in result.rejected_rules:
        err_console.print(f"[yellow]rule dropped[/yellow] (did not validate) {rejected}", highlight=False)
    kinds = Counter(rule.kind for policy in result.new for rule in policy.rules)
    rules = ", ".join(f"{kind} {n}" for kind, n in kinds.most_common()) or "none"
    err_console.print(
        f"{result.statements} statements → {result.extracted} policies ({result.mode}); "
        f"{len(result.merge.added)} new, {len(result.merge.duplicates)} already present; rules: {rules}"
        + ("; marked needs_review" if result.mode == "offline" and result.new else ""),
        highlight=False,
    )


@policies.command("extract")
@click.argument("sources", nargs=-1, required=True)
@click.option(
    "-o", "--out", type=click.Path(dir_okay=False, path_type=Path),
    help="Policy file to write (YAML, or JSON for .json). An existing file is merged into, and its "
    "previous version kept as FILE.rN. Without -o (and --store) the policies go to stdout.",
)  # fmt: skip
@click.option("--subject", help='Whom the policies are for (e.g. "web agents acting for employees").')
@click.option("--org", help="The organisation whose documents these are.")
@click.option(
    "--offline", is_flag=True, help="Use the deterministic extractor even if a model is configured."
)
@_llm_options
def policies_extract(
    sources: tuple[str, ...],
    out: Path | None,
    subject: str | None,
    org: str | None,
    offline: bool,
    llm_base_url: str | None,
    llm_model: str | None,
    llm_config: Path | None,
) -> None:
    """Extract policies from SOURCES (PDF, HTML, Markdown or text files, or http(s) URLs).

    With no model configured (or --offline) a deterministic extractor finds obligation and
    prohibition statements and marks every policy needs_review. With a model (--llm-* or
    PAGEWARDEN_LLM_* in the environment) the model extracts, refines, de-duplicates and
    structures them. Every policy keeps its provenance (document, page or section, sentence).
    Exit 1 when a source could not be read (the others are still written) or nothing was found.
    """
    from pagewarden.policies.extract import extract, write_policy_file

    llm = None if offline else _llm_config(llm_base_url, llm_model, llm_config)
    existing = None
    if out is not None and out.exists():
        try:
            existing = PolicySet.load(out)
        except PolicyError as exc:
            for problem in exc.problems:
                err_console.print(f"[red]error[/red] {problem}", highlight=False, soft_wrap=True)
            err_console.print(f"{out} is not a valid policy file: not merging into it", highlight=False)
            sys.exit(1)
    bar = _Bar()
    try:
        result = extract(sources, existing=existing, llm=llm, subject=subject, org=org, progress=bar)
    finally:
        bar.stop()
    _print_report(result, out)
    if out is not None:
        if result.documents:
            try:
                previous = write_policy_file(out, result.policies)
            except (OSError, PolicyError) as exc:
                err_console.print(f"[red]error[/red] cannot write {out}: {exc}", highlight=False)
                sys.exit(1)
            kept = f" (previous version kept as {previous})" if previous else ""
            kept = kept or (" (unchanged)" if existing is not None else "")
            err_console.print(
                f"[green]wrote[/green] {out}: {len(result.policies)} policies{kept}", highlight=False
            )
    elif result.new:
        click.echo(yaml.safe_dump(PolicySet(result.new).to_dict(), sort_keys=False, allow_unicode=True))
    if result.errors or not result.documents:
        sys.exit(1)
    if not result.new and not result.merge.duplicates:
        err_console.print("no policy statements found", highlight=False)
        sys.exit(1)


__all__ = ["console", "policies_extract"]
