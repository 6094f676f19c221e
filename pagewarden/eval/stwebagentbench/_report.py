"""The conformance report as a table (rich) and as JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from pagewarden.eval.stwebagentbench._explain import CODES
from pagewarden.eval.stwebagentbench._metrics import CategoryMetrics, Report

__all__ = ["render", "reports_to_json", "write_json"]


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def _row(m: CategoryMetrics, style: str = "") -> list[str | Text]:
    return [
        Text(m.category, style=style),
        str(m.policies),
        str(m.out_of_reach),
        str(m.violating),
        _rate(m.detection_rate),
        str(m.compliant),
        str(m.false_blocks),
        _rate(m.false_block_rate),
        str(m.invalid),
    ]


def render(report: Report, console: Console) -> None:
    """Print the per-category table and the misses with their explanations."""
    table = Table(title=Text(f"ST-WebAgentBench conformance — {report.dataset} ({report.tasks} tasks)"))
    for name in ("category", "policies", "out of reach", "violating", "detection", "compliant",
                 "false blocks", "false-block rate", "invalid"):  # fmt: skip
        table.add_column(name, justify="left" if name == "category" else "right")
    for metrics in report.categories.values():
        table.add_row(*_row(metrics))
    table.add_section()
    table.add_row(*_row(report.total, "bold"))
    console.print(table)
    if report.misses:
        groups: dict[tuple[str, str], list[str]] = {}
        for miss in report.misses:
            groups.setdefault((miss.kind, miss.code), []).append(miss.sample.policy_id)
        misses = Table(title=f"{len(report.misses)} misses, by reason")
        for name in ("kind", "reason", "n", "policies"):
            misses.add_column(name, overflow="fold")
        for (kind, code), ids in groups.items():
            shown = ", ".join(dict.fromkeys(ids))
            misses.add_row(Text(kind), Text(f"{code}: {CODES.get(code, '')}"), str(len(ids)), Text(shown))
        console.print(misses)
    if report.invalid:
        console.print(
            f"{len(report.invalid)} scenario(s) had no clean path to their last step: "
            + ", ".join(f"{s.policy_id} ({code})" for s, code, _ in report.invalid),
            highlight=False,
            markup=False,
        )
    unexplained = report.unexplained
    console.print(
        f"[{'red' if unexplained else 'green'}]{len(unexplained)} unexplained[/] — out of reach: "
        + escape("; ".join(f"{n} × {reason}" for reason, n in report.out_of_reach_reasons.items())),
        highlight=False,
    )


def reports_to_json(reports: list[Report]) -> dict[str, Any]:
    """One JSON document for one or more task files."""
    return {"benchmark": "ST-WebAgentBench", "reports": [r.to_dict() for r in reports]}


def write_json(reports: list[Report], path: str | Path) -> None:
    """Write the reports as JSON to `path` (creating its directory)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(reports_to_json(reports), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
