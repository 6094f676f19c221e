"""`pagewarden policies …`: lint, schema, show, and importing policies from other formats."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from pagewarden.cli._base import (
    _cells,
    _error,
    _warning,
    console,
    err_console,
    main,
)
from pagewarden.policies import PolicyError, PolicySet, baseline_policies


# -- policies ------------------------------------------------------------------------------
@main.group()
def policies() -> None:
    """Check, show and import policy files."""


@policies.command("lint")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
def policies_lint(files: tuple[Path, ...], strict: bool) -> None:
    """Validate policy FILES (YAML or JSON); exit 1 if any has a problem.

    Also warns about policies that can never fire on the offline tiers (no rules, rules that
    cannot apply) and about domain patterns no host can match (`shop.test/`, `*.bad..com`).
    """
    from pagewarden.policies import lint_policies

    failed = 0
    warned = 0
    for path in files:
        try:
            policy_set = PolicySet.load(path)
        except PolicyError as exc:
            failed += 1
            for problem in exc.problems:
                _error(problem)
            continue
        warnings = lint_policies(policy_set)
        for problem in warnings:
            _warning(problem)
        warned += bool(warnings)
        rules = sum(len(p.rules) for p in policy_set)
        note = f", {len(warnings)} warning(s)" if warnings else ""
        console.print(
            f"[green]ok[/green] {escape(str(path))}: {len(policy_set)} policies, {rules} rules{note}",
            highlight=False,
        )
    if failed:
        err_console.print(f"{failed} of {len(files)} file(s) failed", highlight=False)
        sys.exit(1)
    if strict and warned:
        err_console.print(f"{warned} of {len(files)} file(s) with warnings (--strict)", highlight=False)
        sys.exit(1)


@policies.command("schema")
@click.argument("kind", required=False)
@click.option(
    "--markdown", is_flag=True, help="Print the reference as the Markdown table of docs/reference/rules.md."
)
@click.option("--json", "as_json", is_flag=True, help="Print the reference as JSON.")
def policies_schema(kind: str | None, markdown: bool, as_json: bool) -> None:
    """Print the field-by-field reference of every rule kind (or of KIND)."""
    from pagewarden.policies import RULE_KINDS, reference_markdown, rule_reference

    docs = rule_reference()
    if kind is not None:
        if kind not in RULE_KINDS:
            raise click.UsageError(f"unknown rule kind {kind!r}; known kinds: {', '.join(RULE_KINDS)}")
        docs = [d for d in docs if d.kind == kind]
    if markdown:
        click.echo(reference_markdown(), nl=False)
        return
    if as_json:
        click.echo(json.dumps([d.to_dict() for d in docs], indent=2, ensure_ascii=False))
        return
    for doc in docs:
        table = Table(title=Text(f"{doc.kind}: {doc.summary}"), title_justify="left", expand=True)
        for column in ("field", "written as", "default", "meaning"):
            table.add_column(column, overflow="fold", ratio=4 if column == "meaning" else None)
        for field in doc.fields:
            name = field.name + "".join(f" (or {a})" for a in field.aliases)
            table.add_row(*_cells(name, field.type, field.default, field.description))
        console.print(table)
    if kind is None:
        console.print(
            "Each rule is a one-key mapping, `KIND: {field: value, ...}`; url/domain kinds may be "
            "written `KIND: pattern` or `KIND: [a, b]`. Unknown fields are errors.",
            highlight=False,
            markup=False,
        )


@policies.command("show")
@click.argument("file", required=False, type=click.Path(path_type=Path))
@click.option("--baseline", is_flag=True, help="Show the built-in baseline policies.")
@click.option("--json", "as_json", is_flag=True, help="Print the normalised policies as JSON.")
def policies_show(file: Path | None, baseline: bool, as_json: bool) -> None:
    """Show the policies of FILE (or the built-in baseline) as a table."""
    if file is None and not baseline:
        raise click.UsageError("give a FILE or --baseline")
    try:
        policy_set = baseline_policies() if baseline else PolicySet.load(file)  # type: ignore[arg-type]
    except PolicyError as exc:
        for problem in exc.problems:
            _error(problem)
        sys.exit(1)
    if as_json:
        click.echo(json.dumps(policy_set.to_dict(), indent=2, ensure_ascii=False))
        return
    table = Table(title=Text(f"{policy_set.source} — {len(policy_set)} policies"), show_lines=False)
    for column in ("id", "category", "risk", "description", "rules"):
        table.add_column(column, overflow="fold")
    for policy in policy_set:
        rules = ", ".join(rule.kind for rule in policy.rules) or "-"
        table.add_row(
            *_cells(policy.id, policy.category.value, policy.risk_level.value, policy.description, rules)
        )
    console.print(table)



# -- ST-WebAgentBench: policy import and conformance evaluation ------------------------------
# `pagewarden policies import stwebagentbench PATH [-o OUTDIR]`
# `pagewarden eval stwebagentbench --data PATH [--data PATH] [--json OUT]`
@policies.group("import")
def policies_import() -> None:
    """Import policies from other formats."""


@policies_import.command("stwebagentbench")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write one policy file per task (T<task_id>.yaml) into this directory.",
)
def policies_import_stwebagentbench(path: Path, out_dir: Path | None) -> None:
    """Read an ST-WebAgentBench task file (2024 or current release): one policy set per task."""
    from collections import Counter

    from pagewarden.policies.importers import DatasetError, import_tasks
    from pagewarden.policies.importers.stwebagentbench import OUT_OF_REACH

    try:
        imported = import_tasks(path)
    except DatasetError as exc:
        _error(exc)
        sys.exit(1)
    kinds: Counter[str] = Counter()
    evaluators: Counter[str] = Counter()
    without = 0
    for task, policy_set in imported:
        for benchmark_policy, policy in zip(task.policies, policy_set, strict=True):
            evaluators[benchmark_policy.eval_type] += 1
            kinds.update(rule.kind for rule in policy.rules)
            without += not policy.rules
    if out_dir is not None:
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
            for task, policy_set in imported:
                policy_set.dump(out_dir / f"T{task.task_id}.yaml")
        except OSError as exc:
            _error(f"cannot write to {out_dir}: {exc}")
            sys.exit(1)
    total = sum(evaluators.values())
    table = Table(title=Text(f"{path.name}: {len(imported)} tasks, {total} policies"))
    table.add_column("benchmark evaluator")
    table.add_column("policies", justify="right")
    table.add_column("checked before actions")
    for name, count in evaluators.most_common():
        reach = {"is_fake_policy": "no: a distractor, never violated"}.get(name, "no: judged from page state")
        table.add_row(*_cells(name, str(count), reach if name in OUT_OF_REACH else "yes"))
    console.print(table)
    console.print(
        "rules: "
        + ", ".join(f"{kind} {n}" for kind, n in kinds.most_common())
        + f"; {without} without rules",
        highlight=False,
        markup=False,
    )
    if out_dir is not None:
        wrote = f"[green]wrote[/green] {len(imported)} files to {escape(str(out_dir))}"
        console.print(wrote, highlight=False)
