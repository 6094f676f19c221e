"""The WASP report: a table on the terminal, JSON, and an HTML page with the safety/utility
scatter (PCR against CuP, one point per configuration, drawn with matplotlib — the ``eval``
extra; without it the page says so and has no picture)."""

from __future__ import annotations

import base64
import io
import json
from html import escape
from pathlib import Path
from typing import Any

from rich.markup import escape as rich_escape
from rich.table import Table

from pagewarden.eval.wasp._run import WaspReport

__all__ = ["render_table", "scatter_png", "write_html", "write_json"]


def render_table(report: WaspReport, console: Any) -> None:
    """Print one row per configuration (and per injection kind), then the paper's numbers."""
    table = Table(title=f"WASP (GitLab): {report.tasks} tasks per configuration, {report.seconds:.0f} s")
    for column in ("configuration", "injection", "tasks", "PCR", "CuP", "PCR strict", "ASR interm.",
                   "ASR end-to-end", "detected", "benign done", "false stops", "ms/step", "LLM/step",
                   "errors"):  # fmt: skip
        table.add_column(column, justify="left" if column in ("configuration", "injection") else "right")
    for c in report.configs:
        table.add_row(
            rich_escape(c.config), "all", str(c.tasks), f"{c.pcr:.3f}", f"{c.cup:.3f}", f"{c.pcr_strict:.3f}",
            f"{c.asr_intermediate:.3f}", f"{c.asr_end_to_end:.3f}", f"{c.detection:.3f}",
            f"{c.benign_completion:.3f}", str(c.false_stops), f"{c.ms_per_step:.0f}",
            f"{c.llm_calls_per_step:.2f}", str(c.errors),
        )  # fmt: skip
        for group, m in c.by_template.items():
            table.add_row(
                "", group.replace("_", " "), str(int(m["tasks"])), f"{m['pcr']:.3f}", f"{m['cup']:.3f}",
                f"{m['pcr_strict']:.3f}", "", f"{m['asr_end_to_end']:.3f}", "", "", "", "", "", "",
            )  # fmt: skip
    for name, numbers in report.paper.items():
        table.add_row(rich_escape(name), "(paper)", "", f"{numbers['pcr']:.3f}", f"{numbers['cup']:.3f}",
                      "", "", "", "", "", "", "", "", "")  # fmt: skip
    console.print(table)


def write_json(report: WaspReport, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def scatter_png(report: WaspReport) -> bytes | None:
    """PCR (x) against CuP (y), one point per configuration and one per paper result; None
    when matplotlib (the ``eval`` extra) is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(5.5, 4.2), dpi=100)
    for c in report.configs:
        ax.scatter([c.pcr], [c.cup], s=60)
        ax.annotate(c.config, (c.pcr, c.cup), textcoords="offset points", xytext=(6, 4), fontsize=9)
    for name, numbers in report.paper.items():
        ax.scatter([numbers["pcr"]], [numbers["cup"]], marker="x", color="grey")
        short = name.replace("HarmonyGuard, GitHub ", "HG paper: ")
        ax.annotate(short, (numbers["pcr"], numbers["cup"]), textcoords="offset points", xytext=(-90, -12),
                    fontsize=8, color="grey")  # fmt: skip
    ax.set_xlim(-0.05, 1.08)
    ax.set_ylim(-0.05, 1.08)
    ax.set_xlabel("PCR (policy compliance rate)")
    ax.set_ylabel("CuP (completion under policy)")
    ax.set_title("WASP GitLab: safety vs utility")
    ax.grid(alpha=0.3)
    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()


def write_html(report: WaspReport, path: Path) -> None:
    """A static page: the metrics per configuration, the scatter, the stopped actions."""
    rows = "".join(
        f"<tr><td>{escape(c.config)}</td><td>{c.tasks}</td><td>{c.pcr:.3f}</td><td>{c.cup:.3f}</td>"
        f"<td>{c.pcr_strict:.3f}</td>"
        f"<td>{c.asr_intermediate:.3f}</td><td>{c.asr_end_to_end:.3f}</td>"
        f"<td>{c.detection:.3f}</td><td>{c.benign_completion:.3f}</td>"
        f"<td>{c.false_stops}</td><td>{c.ms_per_step:.0f}</td><td>{c.llm_calls_per_step:.2f}</td>"
        f"<td>{c.errors}</td></tr>"
        for c in report.configs
    )
    paper = "".join(
        f"<tr><td>{escape(name)} (paper)</td><td></td><td>{n['pcr']:.3f}</td><td>{n['cup']:.3f}</td>"
        "<td></td><td></td><td></td><td></td><td></td><td></td><td></td><td></td><td></td></tr>"
        for name, n in report.paper.items()
    )
    attacks = "".join(
        f"<tr><td>{escape(c.config)}</td><td>{escape(name)}</td><td>{int(m['tasks'])}</td>"
        f"<td>{m['detection']:.3f}</td><td>{m['pcr']:.3f}</td><td>{m['false_stop_rate']:.3f}</td></tr>"
        for c in report.configs
        for name, m in c.by_attack.items()
    )
    png = scatter_png(report)
    if png:
        data = base64.b64encode(png).decode()
        picture = f"<img alt='PCR against CuP per configuration' src='data:image/png;base64,{data}'>"
    else:
        picture = "<p><i>No scatter: install pagewarden's eval extra.</i></p>"

    def stopped(e: Any) -> str:
        return "; ".join(f"{s['step']} → {s['decision']} {','.join(s['policies'])}" for s in e.stopped)

    stops = "".join(
        f"<tr><td>{escape(e.config)}</td><td>{escape(e.task)}</td><td>{escape(e.role)}</td>"
        f"<td>{escape(stopped(e))}</td><td>{escape('; '.join(e.errors))}</td></tr>"
        for e in report.episodes
        if e.stopped or e.errors
    )
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>pagewarden: WASP evaluation</title>"
        "<style>body{font:14px system-ui,sans-serif;margin:1.5rem;max-width:1000px}table{border-collapse:"
        "collapse;width:100%;table-layout:fixed}td,th{border-bottom:1px solid #ddd;padding:.3rem;"
        "overflow-wrap:anywhere;text-align:left}img{max-width:100%}</style></head><body>"
        f"<h1>WASP (GitLab): {report.tasks} tasks per configuration</h1>"
        "<p>Follower agent: falls for every injection, returns to the user's task when stopped. "
        "PCR: no action carrying out the attacker's goal ran (submit, send); CuP: user task done with "
        "none; PCR strict: no action following the injection at all; ASR: WASP's intermediate and "
        "end-to-end success.</p>"
        "<table><tr><th>configuration</th><th>tasks</th><th>PCR</th><th>CuP</th><th>PCR strict</th>"
        "<th>ASR interm.</th>"
        "<th>ASR end-to-end</th><th>detected</th><th>benign done</th><th>false stops</th>"
        "<th>guard ms/step</th><th>LLM calls/step</th><th>errors</th></tr>"
        f"{rows}{paper}</table>"
        f"{picture}<h2>Per attacker goal</h2><table><tr><th>config</th><th>attacker goal</th><th>tasks</th>"
        "<th>detected</th><th>PCR</th><th>benign false-stop rate</th></tr>"
        f"{attacks}</table><h2>Stopped actions and errors</h2><table><tr><th>config</th><th>task</th>"
        f"<th>agent</th><th>stopped</th><th>errors</th></tr>{stops}</table></body></html>\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
