"""A session's report as the console recorded it: static HTML, every value escaped, no script."""

from __future__ import annotations

import html
import json
import time
from typing import Any

from pagewarden.console._hub import SessionRecord

__all__ = ["render_report"]


def _e(value: Any) -> str:
    if value is None:
        return ""
    return html.escape(value if isinstance(value, str) else json.dumps(value, default=str), quote=True)


def _when(ts: Any) -> str:
    if isinstance(ts, (int, float)):
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
    return _e(ts)


def _action(step: dict[str, Any]) -> str:
    action = step.get("action") or {}
    text = " ".join(str(v) for v in (action.get("kind"), action.get("selector"), action.get("value")) if v)
    target = step.get("target") or {}
    if target.get("name") or target.get("text"):
        text += f" on {target.get('name') or target.get('text')}"
    if target.get("href"):
        text += f" → {target['href']}"
    return text


def _rows(items: list[str]) -> str:
    return "".join(items) or '<tr><td colspan="9" class="none">none</td></tr>'


def render_report(record: SessionRecord) -> str:
    """The whole report page for one session."""
    summary = record.summary()
    steps = [
        "<tr class='d-{d}'><td>{i}</td><td>{a}</td><td class='url'>{u}</td><td>{d}</td><td>{p}</td>"
        "<td>{x}</td><td>{r}</td></tr>".format(
            i=_e(s.get("index")),
            a=_e(_action(s)),
            u=_e(s.get("url")),
            d=_e(s.get("decision"))
            + (f" (approved by {_e(s['approved_by'])})" if s.get("approved_by") else ""),
            p=_e(", ".join(p for p in s.get("policies") or [] if p)),
            x=_e(s.get("explanation")),
            r=_e(s.get("reasoning")),
        )
        for s in record.steps
    ]
    approvals = [
        f"<tr><td>{_e(a.get('id'))}</td><td>{_e((a.get('step') or {}).get('action'))}</td>"
        f"<td>{_e(a.get('status'))}</td><td>{_e(a.get('by'))}</td>"
        f"<td>{_e((a.get('verdict') or {}).get('explanation'))}</td></tr>"
        for a in record.approvals.values()
    ]
    network = [
        f"<tr><td>{_when(n.get('ts'))}</td><td>{_e({k: v for k, v in n.items() if k != 'ts'})}</td></tr>"
        for n in record.network
    ]
    orders = [
        f"<tr><td>{_when(o.get('ts'))}</td><td>{_e(o.get('op'))}</td><td>{_e(o.get('status'))}</td>"
        f"<td>{_e(o.get('error'))}</td></tr>"
        for o in record.orders
    ]
    decisions = ", ".join(f"{_e(k)}: {v}" for k, v in sorted(summary["decisions"].items())) or "none"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>pagewarden session {_e(record.id)}</title>
<link rel="stylesheet" href="/static/report.css"></head><body>
<h1>pagewarden session <code>{_e(record.id)}</code></h1>
<dl>
<dt>goal</dt><dd>{_e(record.goal)}</dd>
<dt>status</dt><dd>{_e(record.status)}</dd>
<dt>mode</dt><dd>{_e(record.mode)}</dd>
<dt>started</dt><dd>{_when(record.started)}</dd>
<dt>last URL</dt><dd class="url">{_e(record.url)}</dd>
<dt>steps</dt><dd>{record.step_count} ({decisions})</dd>
<dt>trace</dt><dd>{_e(record.trace) or "not recorded"}</dd>
</dl>
<p class="note">Everything below comes from the supervised pages and is shown as text. The console keeps
the last {record.steps.maxlen} steps; the trace file has them all.</p>
<h2>Steps</h2>
<table><tr><th>#</th><th>action</th><th>URL</th><th>decision</th><th>policies</th><th>explanation</th>
<th>reasoning</th></tr>{_rows(steps)}</table>
<h2>Approvals</h2>
<table><tr><th>id</th><th>action</th><th>status</th><th>by</th><th>why asked</th></tr>
{_rows(approvals)}</table>
<h2>Network refusals</h2>
<table><tr><th>when</th><th>event</th></tr>{_rows(network)}</table>
<h2>Take-over actions</h2>
<table><tr><th>when</th><th>op</th><th>status</th><th>error</th></tr>{_rows(orders)}</table>
</body></html>
"""
