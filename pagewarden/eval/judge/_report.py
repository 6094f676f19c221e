"""The judge evaluation's report as tables (rich) and as JSON."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from pagewarden.eval.judge._items import LABELS
from pagewarden.eval.judge._metrics import DECISIONS, JudgeReport

__all__ = ["render", "write_json"]


def _num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def render(report: JudgeReport, console: Console, *, mistakes: int = 10) -> None:
    """Print the per-label table, the confusion table, cost and latency, and the first mistakes."""
    title = (
        f"Judge evaluation — {report.dataset}: {report.items} items, "
        f"model {report.model}, tiers {report.tiers}"
    )
    table = Table(title=Text(title))
    for name in ("label", "items", "decided", "correct", "precision", "recall"):
        table.add_column(name, justify="left" if name == "label" else "right")
    for m in report.labels:
        table.add_row(Text(m.label), str(m.items), str(m.predicted), str(m.correct),
                      _num(m.precision), _num(m.recall))  # fmt: skip
    console.print(table)
    confusion = Table(title=Text("label (rows) × decision (columns)"))
    confusion.add_column("label")
    for decision in DECISIONS:
        confusion.add_column(decision, justify="right")
    for label in LABELS:
        confusion.add_row(Text(label), *(str(report.confusion[label][d]) for d in DECISIONS))
    console.print(confusion)
    lat, model = report.latency_ms, report.model_ms
    lines = [
        f"accuracy {_num(report.accuracy)}; missed violations (ask/block allowed) {report.missed}; "
        f"false blocks (allow blocked) {report.false_blocks}; "
        f"false stops (allow not allowed) {report.false_stops}",
        f"model consulted on {report.consulted} item(s); "
        f"failures (no judgement: safe decision) {report.failures}",
        f"latency per item p50 {_num(lat['p50'], 0)} ms, p95 {_num(lat['p95'], 0)} ms "
        f"(model p50 {_num(model['p50'], 0)} ms, p95 {_num(model['p95'], 0)} ms)",
        f"per item: {_num(report.calls_per_item)} model call(s), "
        f"{_num(report.prompt_tokens_per_item, 0)} prompt + "
        f"{_num(report.completion_tokens_per_item, 0)} completion tokens",
    ]
    for line in lines:
        console.print(Text(line))
    if report.tags:
        tags = Table(title=Text("by tag"))
        for name in ("tag", "items", "correct", "missed", "false stops"):
            tags.add_column(name, justify="left" if name == "tag" else "right")
        for tag, counts in report.tags.items():
            tags.add_row(Text(tag), *(str(counts[k]) for k in ("items", "correct", "missed", "false_stops")))
        console.print(tags)
    wrong = [r for r in report.results if not r.correct][:mistakes]
    if wrong:
        table = Table(title=Text(f"first {len(wrong)} mistake(s)"))
        for name in ("id", "label", "decision", "why (label)", "guard"):
            table.add_column(name, overflow="fold")
        for r in wrong:
            guard = r.error if r.failed else r.explanation
            table.add_row(*(Text(x) for x in (r.id, r.label, r.decision, r.reason[:120], guard[:160])))
        console.print(table)


def write_json(report: JudgeReport, path: str | Path) -> None:
    """Write the report (with every item's result) as JSON."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
